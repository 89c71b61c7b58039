import Foundation
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorWire
import Testing

@Suite("What answers tell a client: fixed reasons, a request id the log shares, nosniff, the batch media type")
struct ErrorAnswerTests {
    @Test("A store that is down: 503 with a fixed reason and nothing about the server; the log has the error under the request id")
    func storeDownSaysNothing() async throws {
        // A server that is down: its address takes connections and closes them at once. (A port bound and let go
        // could be any other test's server by now.)
        let down = try TCPForwarder()
        defer { down.stop() }
        down.upstream = .down
        let port = down.port
        let collector = try await CollectorProcess(store: "postgres://spoor:db-password-0123@127.0.0.1:\(port)/spoor",
                                             arguments: ["--store-timeout", "2"], keepingLog: true)
        let answer = try await collector.request(body: Frames.frame(Frames.events(2)))
        #expect(answer.status == 503)
        #expect(answer.body == #"{"error":"store_unavailable","detail":"the store is not answering; retry later"}"#)
        for secret in [String(port), "127.0.0.1", "PostgreSQL", "postgres", "spoor", "db-password"] {
            #expect(!answer.body.contains(secret), "the answer shows \(secret)")
        }
        let requestID = try #require(answer.headers["x-request-id"])
        #expect(requestID.count >= 16)
        let health = try await collector.request("GET", "/healthz")
        #expect(health.status == 503)
        #expect(health.body == #"{"error":"store_unavailable","detail":"the store is not answering"}"#)
        // The log line is written before the answer; awaited as the process's standard error is read.
        let (_, line) = try await collector.process.line(.errors) { $0.contains(requestID) }
        #expect(line.contains("answered 503") && line.contains("PostgreSQL"), "\(line)")
        // The kept log file holds what was read, that line included.
        let log = try String(contentsOf: try #require(collector.errorLog), encoding: .utf8)
        #expect(log.contains(requestID))
        #expect(!log.contains("db-password"), "the log shows the password")
    }

    @Test("Every answer carries X-Request-Id and X-Content-Type-Options: nosniff; errors echo nothing of the request")
    func commonHeaders() async throws {
        let collector = try await CollectorProcess(arguments: ["--token", CredentialTests.ingestToken, "--max-body", "1000"])
        let auth = ["Authorization": "Bearer \(CredentialTests.ingestToken)"]
        let frame = try Frames.frame(Frames.events(2))
        let longPath = "/v9/" + String(repeating: "secret-looking-path-", count: 50)
        let answers: [(String, (status: Int, body: String, headers: [String: String]))] = [
            ("stored", try await collector.request(body: frame, headers: auth)),
            ("bad frame", try await collector.request(body: [1, 2, 3], headers: auth)),
            ("no token", try await collector.request(body: frame)),
            ("too large", try await collector.request(body: [UInt8](repeating: 0, count: 2000), headers: auth)),
            ("wrong type", try await collector.request(body: frame, headers: auth.merging(["Content-Type": "application/json"]) { $1 })),
            ("unknown path", try await collector.request("GET", longPath)),
            ("wrong method", try await collector.request("GET", "/v1/batch")),
            ("health", try await collector.request("GET", "/healthz")),
            ("metrics", try await collector.request("GET", "/metrics")),
            ("page", try await collector.request("GET", "/")),
            ("recent", try await collector.request("GET", "/v1/events/recent?after=x")),
        ]
        var ids: Set<String> = []
        for (label, answer) in answers {
            #expect(answer.headers["x-content-type-options"] == "nosniff", "\(label)")
            let id = answer.headers["x-request-id"] ?? ""
            #expect(!id.isEmpty, "\(label)")
            ids.insert(id)
        }
        #expect(ids.count == answers.count, "request ids repeat")
        #expect(answers[0].1.status == 200 && answers[4].1.status == 415 && answers[5].1.status == 404)
        #expect(!answers[5].1.body.contains("secret-looking"))
    }

    @Test("POST /v1/batch takes only Content-Type: application/x-spoor-batch (any case, with parameters)")
    func batchMediaType() async throws {
        let collector = try await CollectorProcess()
        let frame = try Frames.frame(Frames.events(2))
        for type in ["application/octet-stream", "text/plain", "application/x-spoor-batchx", "application/x-spoor", "multipart/form-data"] {
            let answer = try await collector.request(body: frame, headers: ["Content-Type": type])
            #expect(answer.status == 415, "\(type)")
            #expect(answer.body.hasPrefix(#"{"error":"unsupported_media_type""#))
        }
        // No Content-Type at all, as a bare socket sends it.
        var request = Array("POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(frame.count)\r\n\r\n".utf8)
        request += frame
        #expect(try await RawHTTP.exchange(port: collector.port, request).status == 415)
        #expect(try await collector.request(body: frame, headers: ["Content-Type": "Application/X-Spoor-Batch; version=1"]).status == 200)
    }

    @Test("/healthz asks the store at most once a second however many ask at once")
    func healthIsCached() async throws {
        let collector = try await CollectorProcess()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await collector.request("GET", "/healthz").status } }
            for try await status in group { #expect(status == 200) }
        }
        let seconds = Int((ContinuousClock.now - start).components.seconds) + 1
        let metrics = try await collector.request("GET", "/metrics").body
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("spoor_collector_health_checks_total ") })
        let checks = try #require(Int(line.split(separator: " ")[1]))
        #expect(checks >= 1 && checks <= seconds + 1, "\(checks) store checks in \(seconds) s")
    }
}
