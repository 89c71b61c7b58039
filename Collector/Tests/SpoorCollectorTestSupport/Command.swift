import Foundation
import SpoorLoopback
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Commands the tests run to their end: `psql`, the PostgreSQL cluster script, `nm`, `swift package`, the
/// collector's subcommands.
public enum Command {
    /// How a command ended and what it wrote.
    public struct Outcome: Sendable {
        /// The exit status; 128 + the signal's number when a signal ended it.
        public var status: Int32
        /// Its standard output.
        public var output: String
        /// Its standard error.
        public var errors: String
    }

    /// Runs a command to its end and returns its standard output; a non-zero exit throws with its standard error.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        let outcome = try await self.outcome(executable, arguments)
        guard outcome.status == 0 else {
            throw CollectorTestError("\(executable) \(arguments.joined(separator: " ")) failed (status \(outcome.status)): \(outcome.errors)")
        }
        return outcome.output
    }

    /// Runs a command to its end and returns how it ended; throws only when it cannot be started.
    ///
    /// posix_spawn, and waitpid on a thread of its own: the wait holds none of the cooperative pool's threads.
    public static func outcome(_ executable: String, _ arguments: [String]) async throws -> Outcome {
        try await onThreadOfItsOwn { () throws(CollectorTestError) in try runBlocking(executable, arguments) }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String]) throws(CollectorTestError) -> Outcome {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-run-\(UUID().uuidString)").path
        let errorPath = outputPath + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        Spawning.closeInherited(&actions)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CollectorTestError("cannot start \(executable): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw CollectorTestError("waitpid \(executable): errno \(errno)") }
        }
        // WIFEXITED, WEXITSTATUS and WTERMSIG, which Swift does not import.
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
        return Outcome(
            status: code,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        )
    }
}
