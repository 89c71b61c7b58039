import Foundation
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorLoopback
import Testing

/// A certificate authority and a server certificate for 127.0.0.1 and localhost, made by `openssl` for one test.
final class TestCertificates: Sendable {
    let directory: URL
    var authority: String { directory.appendingPathComponent("ca.pem").path }
    var certificate: String { directory.appendingPathComponent("server.pem").path }
    var key: String { directory.appendingPathComponent("server.key").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.path
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
            .write(toFile: "\(path)/server.ext", atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try Command.run("openssl", ["req", "-x509"] + curve + ["-keyout", "\(path)/ca.key", "-out", "\(path)/ca.pem",
                                                             "-days", "2", "-subj", "/CN=Spoor test authority"])
        try Command.run("openssl", ["req"] + curve + ["-keyout", "\(path)/server.key", "-out", "\(path)/server.csr",
                                                    "-subj", "/CN=127.0.0.1"])
        try Command.run("openssl", ["x509", "-req", "-in", "\(path)/server.csr", "-CA", "\(path)/ca.pem", "-CAkey", "\(path)/ca.key",
                                    "-CAcreateserial", "-out", "\(path)/server.pem", "-days", "2", "-extfile", "\(path)/server.ext"])
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

@Suite("TLS on all three connections: HTTPS to the collector, PostgreSQL with sslmode, NATS with tls:// and credentials")
struct TLSTests {
    /// `curl` posting `frame` to `url` trusting `authority`; its output is the answer's body then its status.
    static func curlPost(_ url: String, frame: [UInt8], authority: String?) async throws -> (status: Int, body: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-frame-\(UUID().uuidString)")
        try Data(frame).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var arguments = ["-sS", "--max-time", "60", "-H", "Content-Type: application/x-spoor-batch", "--data-binary", "@\(file.path)",
                         "-w", "\n%{http_code}"]
        if let authority { arguments += ["--cacert", authority] }
        let command = arguments + [url]
        let output = try await RawHTTP.onThread { try Command.run("curl", command) }
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test("serve --tls-cert/--tls-key: a client that trusts the authority gets 200 over HTTPS; plain HTTP and an untrusting client get nothing")
    func https() async throws {
        let certificates = try await RawHTTP.onThread { try TestCertificates() }
        let collector = try await RawHTTP.collector(arguments: ["--tls-cert", certificates.certificate, "--tls-key", certificates.key])
        let url = "https://127.0.0.1:\(collector.port)/v1/batch"
        let stored = try await Self.curlPost(url, frame: Frames.frame(Frames.events(4)), authority: certificates.authority)
        #expect(stored.status == 200, "\(stored.body)")
        #expect(stored.body.contains(#""events":4"#))
        // A client that does not trust the authority refuses the server; plain HTTP is not answered.
        await #expect(throws: (any Error).self) { _ = try await Self.curlPost(url, frame: Frames.frame(Frames.events(1)), authority: nil) }
        let plain = try? await TestHTTP.send("GET", URL(string: "http://127.0.0.1:\(collector.port)/healthz")!, timeout: 10)
        #expect(plain?.status != 200)
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 4)
    }

    @Test("--tls-cert without --tls-key, or a key that is not PEM, refuses to start")
    func badTLSOptions() async throws {
        let certificates = try await RawHTTP.onThread { try TestCertificates() }
        let half = try await CredentialTests.refusal(["serve", "--listen", "127.0.0.1:0", "--tls-cert", certificates.certificate])
        #expect(half.contains("--tls-key"))
        let wrong = try await CredentialTests.refusal(["serve", "--listen", "127.0.0.1:0", "--tls-cert", certificates.certificate,
                                                      "--tls-key", certificates.certificate])
        #expect(wrong.contains("--tls-key"))
    }

    @Test("PostgreSQL with ssl=on: sslmode=verify-full stores over TLS; an untrusted authority or a server without TLS is 503")
    func postgres() async throws {
        let certificates = try await RawHTTP.onThread { try TestCertificates() }
        let cluster = try await RawHTTP.make { try PostgresCluster(tls: (certificates.certificate, certificates.key)) }
        let verified = try await RawHTTP.collector(store: cluster.url + "?sslmode=verify-full&sslrootcert=\(certificates.authority)")
        #expect(try await verified.request(body: Frames.frame(Frames.events(5))).status == 200)
        #expect(try cluster.query("SELECT count(*) FROM events") == "5")
        #expect(try cluster.query("SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND usename = 'spoor' AND backend_type = 'client backend' AND pid <> pg_backend_pid()") != "0")
        // Another authority: the server's certificate is refused.
        let other = try await RawHTTP.onThread { try TestCertificates() }
        let untrusted = try await RawHTTP.collector(store: cluster.url + "?sslmode=verify-full&sslrootcert=\(other.authority)",
                                             arguments: ["--store-timeout", "5"])
        #expect(try await untrusted.request(body: Frames.frame(Frames.events(1))).status == 503)
        // A server without TLS, and a client that requires it.
        let plain = try await RawHTTP.make { try PostgresCluster() }
        let required = try await RawHTTP.collector(store: plain.url + "?sslmode=require", arguments: ["--store-timeout", "5"])
        #expect(try await required.request(body: Frames.frame(Frames.events(1))).status == 503)
        // Nothing reached it: not even the tables were created.
        #expect((try? plain.query("SELECT count(*) FROM events")) ?? "0" == "0")
        #expect(try cluster.query("SELECT count(*) FROM events") == "5")
    }

    @Test("NATS with tls {} and authorization {}: collector and drain connect with tls://, the authority and their users; wrong ones get 503")
    func nats() async throws {
        let certificates = try await RawHTTP.onThread { try TestCertificates() }
        let server = try await RawHTTP.onThread { try SecureNATS(certificates: certificates) }
        let collectorUser = "collector:collector-secret-0123"
        let collector = try await RawHTTP.collector(
            store: "tls://\(collectorUser)@127.0.0.1:\(server.port)/SECURE",
            arguments: ["--nats-ca", certificates.authority, "--replicas", "1", "--store-timeout", "5"]
        )
        #expect(try await collector.request(body: Frames.frame(Frames.events(6))).status == 200)
        let wrong = try await RawHTTP.collector(
            store: "tls://collector:not-the-password@127.0.0.1:\(server.port)/SECURE",
            arguments: ["--nats-ca", certificates.authority, "--replicas", "1", "--store-timeout", "3"]
        )
        let refused = try await wrong.request(body: Frames.frame(Frames.events(1)))
        #expect(refused.status == 503 && !refused.body.contains("not-the-password"))
        let plain = try await RawHTTP.collector(store: "nats://\(collectorUser)@127.0.0.1:\(server.port)/SECURE",
                                         arguments: ["--replicas", "1", "--store-timeout", "3"])
        #expect(try await plain.request(body: Frames.frame(Frames.events(1))).status == 503)
        // The drain, as its own user.
        let drain = try LineProcess(try CollectorProcess.binary(), [
            "drain", "--from", "tls://drain:drain-secret-0123@127.0.0.1:\(server.port)/SECURE", "--nats-ca", certificates.authority,
            "--store", "sqlite:\(collector.directory.appendingPathComponent("drained.sqlite").path)", "--exit-when-drained",
        ])
        #expect(try await drain.exitStatus(timeout: .seconds(120)) == 0)
        let drained = try SQLiteStore(path: collector.directory.appendingPathComponent("drained.sqlite").path)
        #expect(try drained.countsByName().map(\.count).reduce(0, +) == 6)
    }
}

/// One `nats-server` with JetStream that takes TLS connections only, from two users.
final class SecureNATS: Sendable {
    let port: Int
    let directory: URL
    private let process: LineProcess

    init(certificates: TestCertificates) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-secure-nats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (fd, port) = try listenOnLoopback(port: 0)
        HTTPConnection(fd: fd).close()
        self.port = port
        let configuration = """
            host: 127.0.0.1
            port: \(port)
            jetstream { store_dir: "\(directory.appendingPathComponent("js").path)" }
            tls { cert_file: "\(certificates.certificate)", key_file: "\(certificates.key)", timeout: 5 }
            authorization {
              users = [
                { user: collector, password: "collector-secret-0123" }
                { user: drain, password: "drain-secret-0123" }
              ]
            }
            """
        let file = directory.appendingPathComponent("nats.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process = try LineProcess(URL(fileURLWithPath: "/usr/sbin/nats-server"), ["-c", file.path], readingErrors: true)
        do {
            _ = try process.waitForLine(timeout: .seconds(60)) { $0.contains("Server is ready") }
        } catch {
            throw CollectorTestError("nats-server with TLS did not start: \(error)\n\(process.output.suffix(10).joined(separator: "\n"))")
        }
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
