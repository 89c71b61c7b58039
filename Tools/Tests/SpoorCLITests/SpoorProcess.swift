import Foundation
import SpoorTesting
import SpoorWire

/// Runs the built `spoor` executable, which sits beside the test bundle in the build products directory.
enum SpoorProcess {
    /// The repository root (this file is Tools/Tests/SpoorCLITests/SpoorProcess.swift).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var executable: URL { built("spoor") }

    /// `SpoorLifecycleChild DIR MODE [SOURCE]`, the tests' program with a real lifecycle.
    static var lifecycleChild: URL { built("SpoorLifecycleChild") }

    /// The built executable `name` in the build products directory.
    static func built(_ name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Apple platforms the runner sits inside an .xctest bundle.
        while directory.pathComponents.count > 1, !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) {
            if directory.lastPathComponent.hasSuffix("debug") || directory.lastPathComponent.hasSuffix("release") { break }
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    struct Result {
        /// The exit status, 128 + the signal that ended the process, or -1 if it did not end within the bound.
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `tool` (the spoor executable unless given) with `arguments`, feeding `input` on stdin, to its end.
    static func run(_ arguments: [String], input: Data = Data(), tool: URL? = nil) async throws -> Result {
        let process = try ChildProcess(arguments, executable: tool ?? executable, input: input)
        let status = await process.termination()?.status
        return Result(status: status ?? -1, stdout: await process.output(), stderr: await process.standardError())
    }
}
