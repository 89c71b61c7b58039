import SpoorCollectorTestSupport
import Foundation
import Testing

/// A throwaway PostgreSQL server in a temporary directory, started by `scripts/postgres-test-cluster`.
///
/// Each test that needs PostgreSQL starts its own (one that stops its server cannot share), and stops it
/// when released, failed test or not. If the server cannot start, creating this throws: the test fails.
final class PostgresCluster {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/postgres-test-cluster")

    let directory: URL
    /// `postgres://spoor@127.0.0.1:PORT/spoor`.
    private(set) var url = ""

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-pg-\(UUID().uuidString)")
        try start()
    }

    deinit {
        _ = try? Self.run(Self.script.path, ["destroy", directory.path])
    }

    /// Starts the server (again, on the same port after `stop()`).
    func start() throws {
        url = try Self.run(Self.script.path, ["start", directory.path]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard url.hasPrefix("postgres://") else { throw CollectorTestError("postgres-test-cluster printed \(url)") }
    }

    /// Stops the server (fast shutdown: open connections are closed).
    func stop() throws {
        _ = try Self.run(Self.script.path, ["stop", directory.path])
    }

    /// Sends `signal` to the server and its backends (SIGSTOP: a server that hangs instead of refusing).
    func signalServer(_ signal: Int32) throws {
        let pidFile = try String(contentsOfFile: directory.appendingPathComponent("data/postmaster.pid").path, encoding: .utf8)
        guard let postmaster = pid_t(pidFile.split(separator: "\n").first ?? "") else {
            throw CollectorTestError("no pid in postmaster.pid")
        }
        var pids = [postmaster]
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") where pid_t(entry) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster, let pid = pid_t(entry) { pids.append(pid) }
        }
        for pid in pids { kill(pid, signal) }
    }

    /// One value from `psql -At` (rows separated by newlines, columns by `|`).
    func query(_ sql: String) throws -> String {
        try Self.run("psql", [ "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a command to its end and returns its standard output; a non-zero exit throws with its standard error.
    ///
    /// posix_spawn and waitpid rather than `Process`: Foundation's `waitUntilExit` was seen to hang here when
    /// several tests waited at once on the two threads of the cooperative pool.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
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
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CollectorTestError("cannot start \(executable): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw CollectorTestError("waitpid \(executable): errno \(errno)") }
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw CollectorTestError("\(executable) \(arguments.joined(separator: " ")) failed (wait status \(status)): \(errors)")
        }
        return output
    }
}
