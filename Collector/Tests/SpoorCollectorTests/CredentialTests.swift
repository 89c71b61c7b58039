import Foundation
import SpoorCollectorCore
import SpoorCollectorTestSupport
import SpoorLoopback
import Testing

@Suite("Who may call what: ingest and admin tokens, loopback, a public address, secrets kept out of messages")
struct CredentialTests {
    static let ingestToken = "ingest-token-0123456789abcdef"
    static let adminToken = "admin-token-0123456789abcdef"

    /// Runs `spoor-collector` with `arguments` to its end (without holding a thread of the cooperative pool) and
    /// returns what it printed to standard error; throws when it did not fail.
    static func refusal(_ arguments: [String]) async throws -> String {
        let outcome = try await Command.outcome(try CollectorProcess.binary().path, arguments)
        guard outcome.status != 0 else {
            throw CollectorTestError("spoor-collector \(arguments.joined(separator: " ")) did not fail: \(outcome.output)")
        }
        return outcome.errors
    }

    @Test("The app's ingest token is refused on the read routes (403); an admin token reads; both may send batches")
    func ingestTokenCannotRead() async throws {
        let collector = try await CollectorProcess(arguments: ["--token", Self.ingestToken, "--admin-token", Self.adminToken])
        let ingest = ["Authorization": "Bearer \(Self.ingestToken)"]
        let admin = ["Authorization": "Bearer \(Self.adminToken)"]
        #expect(try await collector.request(body: Frames.frame(Frames.events(3)), headers: ingest).status == 200)
        #expect(try await collector.request(body: Frames.frame(Frames.events(2)), headers: admin).status == 200)
        for path in ["/v1/events/recent", "/v1/events/recent?after=0", "/metrics"] {
            let withIngest = try await collector.request("GET", path, headers: ingest)
            #expect(withIngest.status == 403, "\(path): \(withIngest.body)")
            #expect(!withIngest.body.contains("distinct_id") && !withIngest.body.contains("spoor_collector"), "\(path)")
            let without = try await collector.request("GET", path)
            #expect(without.status == 401, "\(path)")
            #expect(without.headers["www-authenticate"] == "Bearer")
            #expect(try await collector.request("GET", path, headers: admin).status == 200, "\(path)")
        }
        // The scheme is case-insensitive; anything else about the field is exact.
        #expect(try await collector.request("GET", "/metrics", headers: ["Authorization": "bearer \(Self.adminToken)"]).status == 200)
        for field in ["Bearer \(Self.adminToken)x", "Bearer  ", "Basic \(Self.adminToken)", "Bearer \(Self.adminToken.dropLast())", Self.adminToken] {
            #expect(try await collector.request("GET", "/metrics", headers: ["Authorization": field]).status == 401, "\(field)")
        }
        // The page and its assets hold no data; /healthz is for load balancers.
        for path in ["/", "/assets/live.js", "/healthz"] {
            #expect(try await collector.request("GET", path).status == 200, "\(path)")
        }
    }

    @Test("Without an admin token the read routes answer only on loopback (the policy); with one, only to it")
    func readPolicy() {
        let open = AccessPolicy(ingestTokens: true, adminTokens: false)
        #expect(open.refusal(.read, caller: .anonymous, fromLoopback: true) == nil)
        #expect(open.refusal(.read, caller: .ingest, fromLoopback: true) == nil)
        #expect(open.refusal(.read, caller: .anonymous, fromLoopback: false)?.status == 403)
        #expect(open.refusal(.read, caller: .ingest, fromLoopback: false)?.status == 403)
        let guarded = AccessPolicy(ingestTokens: true, adminTokens: true)
        #expect(guarded.refusal(.read, caller: .admin, fromLoopback: false) == nil)
        #expect(guarded.refusal(.read, caller: .ingest, fromLoopback: true)?.status == 403)
        #expect(guarded.refusal(.read, caller: .anonymous, fromLoopback: true)?.status == 401)
        #expect(guarded.refusal(.ingest, caller: .anonymous, fromLoopback: true)?.status == 401)
        #expect(guarded.refusal(.ingest, caller: .ingest, fromLoopback: false) == nil)
        #expect(guarded.refusal(.ingest, caller: .admin, fromLoopback: false) == nil)
        #expect(AccessPolicy(ingestTokens: false, adminTokens: false).refusal(.ingest, caller: .anonymous, fromLoopback: false) == nil)
    }

    @Test("Empty, short, malformed or shared tokens are refused at start, and the message never shows them")
    func weakTokens() async throws {
        let cases: [[String]] = [
            ["--token", ""],
            ["--token", "short-secret"],
            ["--admin-token", "fifteen-chars15"],
            ["--token", "has space in it 0123456789"],
            ["--token", "same-token-0123456789abc", "--admin-token", "same-token-0123456789abc"],
        ]
        for extra in cases {
            let message = try await Self.refusal(["serve", "--listen", "127.0.0.1:0", "--store", "sqlite::memory:"] + extra)
            #expect(message.contains("token"), "\(extra): \(message)")
            for value in extra where !value.hasPrefix("--") && !value.isEmpty {
                #expect(!message.contains(value), "\(extra) shows the token: \(message)")
            }
        }
    }

    @Test("Tokens from a file and from the environment, never only the command line")
    func secretsFromFilesAndEnvironment() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("ingest-tokens")
        try "# the apps' tokens\n\(Self.ingestToken)\n\n  second-ingest-token-0123456789  \n".write(to: file, atomically: true, encoding: .utf8)
        let collector = try await CollectorProcess(arguments: ["--token-file", file.path],
                                             environment: ["SPOOR_ADMIN_TOKEN": Self.adminToken])
        let frame = try Frames.frame(Frames.events(2))
        #expect(try await collector.request(body: frame).status == 401)
        #expect(try await collector.request(body: frame, headers: ["Authorization": "Bearer second-ingest-token-0123456789"]).status == 200)
        #expect(try await collector.request("GET", "/metrics").status == 401)
        #expect(try await collector.request("GET", "/metrics", headers: ["Authorization": "Bearer \(Self.adminToken)"]).status == 200)
        let fromEnvironment = try await CollectorProcess(environment: ["SPOOR_TOKEN": "env-token-0123456789abcdef,other-env-token-0123456789"])
        #expect(try await fromEnvironment.request(body: frame).status == 401)
        #expect(try await fromEnvironment.request(body: frame, headers: ["Authorization": "Bearer other-env-token-0123456789"]).status == 200)
    }

    @Test("A non-loopback address without an ingest token refuses to start, naming --insecure; with a token or --insecure it serves")
    func publicAddress() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = "sqlite:\(directory.appendingPathComponent("events.sqlite").path)"
        let message = try await Self.refusal(["serve", "--listen", "0.0.0.0:0", "--store", store])
        #expect(message.contains("--insecure") && message.contains("--token"), "\(message)")
        // An admin token alone does not guard the ingest route.
        let adminOnly = try await Self.refusal(["serve", "--listen", "0.0.0.0:0", "--store", store, "--admin-token", Self.adminToken])
        #expect(adminOnly.contains("--insecure"))
        for extra in [["--insecure"], ["--token", Self.ingestToken]] {
            let server = try LineProcess(try CollectorProcess.binary(), ["serve", "--listen", "0.0.0.0:0", "--store", store] + extra)
            let line = try? await server.line { $0.hasPrefix("listening on ") }
            try await server.stop()
            #expect(line?.line.hasPrefix("listening on 0.0.0.0:") == true, "\(extra): \(server.errors.suffix(5))")
        }
    }

    @Test("A password in --store is never repeated: a malformed URL's message shows ***")
    func redactedStore() async throws {
        let password = "hunter2-do-not-print"
        for store in ["postgres://spoor:\(password)@127.0.0.1/spoor", "mysql://spoor:\(password)@db:3306/x", "nats://user:\(password)@127.0.0.1:4222"] {
            let message = try await Self.refusal(["serve", "--listen", "127.0.0.1:0", "--store", store])
            #expect(!message.contains(password), "\(message)")
            #expect(message.contains("***"), "\(message)")
        }
    }
}
