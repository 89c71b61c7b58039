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

    /// With `tls`, the server takes TLS connections (`ssl=on`) with that certificate and key (PEM files).
    private let tls: (certificate: String, key: String)?

    init(tls: (certificate: String, key: String)? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-pg-\(UUID().uuidString)")
        self.tls = tls
        try start()
    }

    deinit {
        _ = try? Command.run(Self.script.path, ["destroy", directory.path])
    }

    /// Starts the server (again, on the same port after `stop()`).
    func start() throws {
        let start = [Self.script.path, "start", directory.path]
        let arguments = tls.map { ["SPOOR_PG_TLS_CERT=\($0.certificate)", "SPOOR_PG_TLS_KEY=\($0.key)"] + start } ?? start
        url = try Command.run("/usr/bin/env", arguments).trimmingCharacters(in: .whitespacesAndNewlines)
        guard url.hasPrefix("postgres://") else { throw CollectorTestError("postgres-test-cluster printed \(url)") }
    }

    /// Stops the server (fast shutdown: open connections are closed).
    func stop() throws {
        _ = try Command.run(Self.script.path, ["stop", directory.path])
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
        try Command.run("psql", [ "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
