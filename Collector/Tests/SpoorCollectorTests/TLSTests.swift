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

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.path
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
            .write(toFile: "\(path)/server.ext", atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try await Command.run("openssl", ["req", "-x509"] + curve + ["-keyout", "\(path)/ca.key", "-out", "\(path)/ca.pem",
                                                             "-days", "2", "-subj", "/CN=Spoor test authority"])
        try await Command.run("openssl", ["req"] + curve + ["-keyout", "\(path)/server.key", "-out", "\(path)/server.csr",
                                                    "-subj", "/CN=127.0.0.1"])
        try await Command.run("openssl", ["x509", "-req", "-in", "\(path)/server.csr", "-CA", "\(path)/ca.pem", "-CAkey", "\(path)/ca.key",
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
        var arguments = ["-sS", "--max-time", String(waitBound.components.seconds), "-H", "Content-Type: application/x-spoor-batch", "--data-binary", "@\(file.path)",
                         "-w", "\n%{http_code}"]
        if let authority { arguments += ["--cacert", authority] }
        let command = arguments + [url]
        let output = try await Command.run("curl", command)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test("serve --tls-cert/--tls-key: a client that trusts the authority gets 200 over HTTPS; plain HTTP and an untrusting client get nothing")
    func https() async throws {
        let certificates = try await TestCertificates()
        let collector = try await CollectorProcess(arguments: ["--tls-cert", certificates.certificate, "--tls-key", certificates.key])
        let url = "https://127.0.0.1:\(collector.port)/v1/batch"
        let stored = try await Self.curlPost(url, frame: Frames.frame(Frames.events(4)), authority: certificates.authority)
        #expect(stored.status == 200, "\(stored.body)")
        #expect(stored.body.contains(#""events":4"#))
        // A client that does not trust the authority refuses the server; plain HTTP is not answered.
        await #expect(throws: (any Error).self) { _ = try await Self.curlPost(url, frame: Frames.frame(Frames.events(1)), authority: nil) }
        let plain = try? await TestHTTP.send("GET", URL(string: "http://127.0.0.1:\(collector.port)/healthz")!)
        #expect(plain?.status != 200)
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 4)
    }

    @Test("--tls-cert without --tls-key, or a key that is not PEM, refuses to start")
    func badTLSOptions() async throws {
        let certificates = try await TestCertificates()
        let half = try await CredentialTests.refusal(["serve", "--listen", "127.0.0.1:0", "--tls-cert", certificates.certificate])
        #expect(half.contains("--tls-key"))
        let wrong = try await CredentialTests.refusal(["serve", "--listen", "127.0.0.1:0", "--tls-cert", certificates.certificate,
                                                      "--tls-key", certificates.certificate])
        #expect(wrong.contains("--tls-key"))
    }

    @Test("PostgreSQL with ssl=on: sslmode=verify-full stores over TLS; an untrusted authority or a server without TLS is 503")
    func postgres() async throws {
        let certificates = try await TestCertificates()
        let other = try await TestCertificates()
        try await PostgresCluster.with(tls: (certificates.certificate, certificates.key)) { cluster in
            let verified = try await CollectorProcess(store: cluster.url + "?sslmode=verify-full&sslrootcert=\(certificates.authority)")
            #expect(try await verified.request(body: Frames.frame(Frames.events(5))).status == 200)
            #expect(try await cluster.query("SELECT count(*) FROM events") == "5")
            #expect(try await cluster.query("SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND usename = 'spoor' AND backend_type = 'client backend' AND pid <> pg_backend_pid()") != "0")
            // Another authority: the server's certificate is refused.
            let untrusted = try await CollectorProcess(store: cluster.url + "?sslmode=verify-full&sslrootcert=\(other.authority)",
                                                       arguments: ["--store-timeout", "5"])
            #expect(try await untrusted.request(body: Frames.frame(Frames.events(1))).status == 503)
            // A server without TLS, and a client that requires it.
            try await PostgresCluster.with { plain in
                let required = try await CollectorProcess(store: plain.url + "?sslmode=require", arguments: ["--store-timeout", "5"])
                #expect(try await required.request(body: Frames.frame(Frames.events(1))).status == 503)
                // Nothing reached it: not even the tables were created.
                #expect((try? await plain.query("SELECT count(*) FROM events")) ?? "0" == "0")
            }
            #expect(try await cluster.query("SELECT count(*) FROM events") == "5")
        }
    }

    @Test("NATS with tls {} and authorization {}: collector and drain connect with tls://, the authority and their users; wrong ones get 503")
    func nats() async throws {
        let certificates = try await TestCertificates()
        let server = try await SecureNATS(certificates: certificates)
        do {
            try await Self.nats(server: server, certificates: certificates)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func nats(server: SecureNATS, certificates: TestCertificates) async throws {
        let collectorUser = "collector:collector-secret-0123"
        let collector = try await CollectorProcess(
            store: "tls://\(collectorUser)@127.0.0.1:\(server.port)/SECURE",
            arguments: ["--nats-ca", certificates.authority, "--replicas", "1", "--store-timeout", "5"]
        )
        #expect(try await collector.request(body: Frames.frame(Frames.events(6))).status == 200)
        let wrong = try await CollectorProcess(
            store: "tls://collector:not-the-password@127.0.0.1:\(server.port)/SECURE",
            arguments: ["--nats-ca", certificates.authority, "--replicas", "1", "--store-timeout", "3"]
        )
        let refused = try await wrong.request(body: Frames.frame(Frames.events(1)))
        #expect(refused.status == 503 && !refused.body.contains("not-the-password"))
        let plain = try await CollectorProcess(store: "nats://\(collectorUser)@127.0.0.1:\(server.port)/SECURE",
                                         arguments: ["--replicas", "1", "--store-timeout", "3"])
        #expect(try await plain.request(body: Frames.frame(Frames.events(1))).status == 503)
        // The drain, as its own user.
        let drain = try LineProcess(try CollectorProcess.binary(), [
            "drain", "--from", "tls://drain:drain-secret-0123@127.0.0.1:\(server.port)/SECURE", "--nats-ca", certificates.authority,
            "--store", "sqlite:\(collector.directory.appendingPathComponent("drained.sqlite").path)", "--exit-when-drained",
        ])
        #expect(try await drain.exitStatus() == 0)
        let drained = try SQLiteStore(path: collector.directory.appendingPathComponent("drained.sqlite").path)
        #expect(try drained.countsByName().map(\.count).reduce(0, +) == 6)
    }
}

/// One `nats-server` with JetStream that takes TLS connections only, from two users, on a port it chooses itself.
final class SecureNATS: Sendable {
    let port: Int
    let directory: URL
    private let process: LineProcess

    init(certificates: TestCertificates) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-secure-nats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = """
            host: 127.0.0.1
            port: -1
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
        let process = try LineProcess(URL(fileURLWithPath: "/usr/sbin/nats-server"), ["-c", file.path])
        self.process = process
        do {
            let (_, listening) = try await process.line(.errors) { $0.contains("Listening for client connections on ") }
            guard let port = listening.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
                throw CollectorTestError("no port in `\(listening)`")
            }
            self.port = port
            _ = try await process.line(.errors) { $0.contains("Server is ready") }
        } catch {
            process.signal(SIGKILL)
            throw CollectorTestError("nats-server with TLS did not start: \(error)\n\(process.errors.suffix(10).joined(separator: "\n"))")
        }
    }

    /// Stops the server and removes its directory.
    func stop() async {
        if (try? await process.stop()) == nil { _ = try? await process.stop(signal: SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A server still running when released (a test that failed on the way) is killed; nothing waits.
    deinit {
        process.signal(SIGKILL)
    }
}
