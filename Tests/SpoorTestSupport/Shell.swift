import Foundation
// The test targets follow child processes with SpoorTesting's `ChildProcess`, seen through this module.
@_exported public import class SpoorTesting.ChildProcess

/// Shell commands for tests that check Spoor's bytes against other tools (protoc, gzip, zstd).
public enum Shell {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `command` with bash (pipefail on) and returns its standard output; throws if it fails.
    @discardableResult
    public static func run(_ command: String) async throws -> String {
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "set -o pipefail; " + command])
        guard result.termination == .exited(0) else {
            throw Failure(description: "`\(command)` ended with \(result.termination.map { "\($0)" } ?? "no end"): \(result.errors)")
        }
        return String(decoding: result.output, as: UTF8.self)
    }
}

extension String {
    /// The string quoted for the shell.
    public var quoted: String { "'" + replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
