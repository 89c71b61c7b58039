import SpoorCollectorTestSupport
import SpoorLoopback
import Foundation
import Testing

/// A throwaway PostgreSQL server in a temporary directory, started by `scripts/postgres-test-cluster`, behind a
/// ``TCPForwarder``.
///
/// Each test that needs PostgreSQL starts its own (one that stops its server cannot share) with
/// ``with(_:)``, which destroys it afterwards, failed test or not. The server may come back from ``stop()`` on
/// another port (the script picks a new one when the old is taken); ``url``, through the forwarder, stays the same,
/// so a collector given it reaches the server wherever it listens. If the server cannot start, this throws: the test
/// fails.
final class PostgresCluster: Sendable {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/postgres-test-cluster")

    let directory: URL
    private let forwarder: TCPForwarder

    /// With `tls`, the server takes TLS connections (`ssl=on`) with that certificate and key (PEM files).
    private let tls: (certificate: String, key: String)?

    /// `postgres://spoor@127.0.0.1:PORT/spoor`, the forwarder's port: for collectors. TLS, when on, passes through
    /// the forwarder untouched, between the collector and the server.
    var url: String { "postgres://spoor@127.0.0.1:\(forwarder.port)/spoor" }

    private init(tls: (certificate: String, key: String)?) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-pg-\(UUID().uuidString)")
        forwarder = try TCPForwarder()
        self.tls = tls
    }

    /// Starts a server (with `tls`, one that takes TLS connections), runs `body` with it, and destroys it whatever
    /// `body` did.
    static func with<Value: Sendable>(
        tls: (certificate: String, key: String)? = nil, _ body: (PostgresCluster) async throws -> Value
    ) async throws -> Value {
        let cluster = try PostgresCluster(tls: tls)
        let value: Value
        do {
            try await cluster.start()
            value = try await body(cluster)
        } catch {
            await cluster.destroy()
            throw error
        }
        await cluster.destroy()
        return value
    }

    /// Starts the server (again, after `stop()`, on its port or a new one) and points the forwarder at it.
    func start() async throws {
        let start = [Self.script.path, "start", directory.path]
        let arguments = tls.map { ["SPOOR_PG_TLS_CERT=\($0.certificate)", "SPOOR_PG_TLS_KEY=\($0.key)"] + start } ?? start
        let direct = try await Command.run("/usr/bin/env", arguments).trimmingCharacters(in: .whitespacesAndNewlines)
        guard direct.hasPrefix("postgres://"), let port = Int(direct.split(separator: ":").last?.split(separator: "/").first ?? "") else {
            throw CollectorTestError("postgres-test-cluster printed \(direct)")
        }
        forwarder.upstream = .port(port)
    }

    /// Stops the server (fast shutdown: open connections are closed).
    func stop() async throws {
        // Down: connections are refused (closed at once) until it is back.
        forwarder.upstream = .down
        try await Command.run(Self.script.path, ["stop", directory.path])
    }

    /// Stops the server and removes its directory.
    private func destroy() async {
        forwarder.stop()
        _ = try? await Command.run(Self.script.path, ["destroy", directory.path])
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

    /// One value from `psql -At` (rows separated by newlines, columns by `|`), through the server's own socket.
    func query(_ sql: String) async throws -> String {
        try await Command.run("psql", ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", directory.path, "-p", try serverPort(),
                                       "-U", "spoor", "-d", "spoor", "-c", sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The port the server listens on now (it names its socket in `directory`, too).
    private func serverPort() throws -> String {
        try String(contentsOfFile: directory.appendingPathComponent("port").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
