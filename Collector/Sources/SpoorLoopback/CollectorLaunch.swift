package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting a `spoor-collector` process and waiting until it listens: the one way the load tool and the tests
/// do it.
package enum CollectorLaunch {
    /// Starts `binary` with `arguments` (a `serve` command line listening on 127.0.0.1, port 0 for one of the
    /// kernel's choice) and waits, at most `timeout`, for the `listening on 127.0.0.1:PORT` line the collector
    /// prints first, once it accepts connections; returns the running process and its port. A process that exits,
    /// prints something else first, or stays silent is killed, and this throws with what it said on standard error.
    /// `environment` replaces the process's environment when given; with `standardError`, its log is also appended
    /// to that file.
    package static func start(
        _ binary: URL, _ arguments: [String], timeout: Duration = waitBound,
        environment: [String: String]? = nil, standardError: URL? = nil
    ) async throws(LoopbackError) -> (process: LineProcess, port: Int) {
        let process = try LineProcess(binary, arguments, environment: environment, errorLog: standardError)
        let first: String
        do {
            first = try await process.line(timeout: timeout) { _ in true }.line
        } catch {
            _ = try? await process.stop(signal: SIGKILL)
            throw LoopbackError("\(binary.lastPathComponent) did not print `listening on 127.0.0.1:PORT`: \(error)\n"
                                + process.errors.suffix(10).joined(separator: "\n"))
        }
        let text = first.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("listening on 127.0.0.1:"), let port = Int(text.split(separator: ":").last ?? "") else {
            _ = try? await process.stop(signal: SIGKILL)
            throw LoopbackError("\(binary.lastPathComponent) printed `\(text)` instead of `listening on 127.0.0.1:PORT`")
        }
        return (process, port)
    }
}
