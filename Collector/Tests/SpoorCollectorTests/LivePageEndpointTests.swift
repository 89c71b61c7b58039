import Foundation
import SpoorCollectorCore
import SpoorCollectorTestSupport
import SpoorModel
import SpoorWire
import Testing

@Suite("The live events page's endpoints, on a real collector process", .timeLimit(.minutes(10)))
struct LivePageEndpointTests {
    /// `GET /v1/events/recent` as JSON, with `headers`.
    static func recent(_ collector: CollectorProcess, _ query: String = "", headers: [String: String] = [:]) async throws -> JSONValue {
        let answer = try await collector.request("GET", "/v1/events/recent\(query)", headers: headers)
        guard answer.status == 200 else { throw CollectorTestError("recent\(query): \(answer.status) \(answer.body)") }
        #expect(answer.headers["content-type"] == "application/json")
        #expect(answer.headers["cache-control"] == "no-store")
        return try JSONValue.parse(answer.body)
    }

    @Test("GET / serves the page and its two assets from the binary, with a policy that allows nothing else")
    func page() async throws {
        let collector = try await CollectorProcess()
        let page = try await collector.request("GET", "/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.hasPrefix("default-src 'none'; script-src 'self'; style-src 'self';"))
        #expect(policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(page.headers["x-content-type-options"] == "nosniff")
        #expect(page.body.contains(#"<script src="/assets/live.js" defer></script>"#))
        #expect(page.body.contains(#"<link rel="stylesheet" href="/assets/live.css">"#))
        // Nothing from another origin: every src and href is the collector's own or inline data.
        for attribute in ["src=\"", "href=\""] {
            for part in page.body.components(separatedBy: attribute).dropFirst() {
                #expect(part.hasPrefix("/") || part.hasPrefix("data:"), "\(attribute)\(part.prefix(40))")
            }
        }
        let script = try await collector.request("GET", "/assets/live.js")
        #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(script.body.contains("/v1/events/recent"))
        let style = try await collector.request("GET", "/assets/live.css")
        #expect(style.status == 200 && style.headers["content-type"] == "text/css; charset=utf-8")
        #expect(try await collector.request("GET", "/assets/other.js").status == 404)
    }

    @Test("GET /v1/events/recent: what was stored after a position, the batch ids, and /metrics' counters")
    func recentEvents() async throws {
        let collector = try await CollectorProcess()
        let empty = try await Self.recent(collector)
        #expect(empty["latest"] == .int(0) && empty["events"]?.elements?.isEmpty == true)
        let first = Frames.events(10)
        let firstFrame = try Frames.frame(first)
        let stored = try await collector.request(body: firstFrame)
        #expect(stored.status == 200)
        let batchID = try #require(try JSONValue.parse(stored.body)["batch_id"]?.text)
        let second = Frames.events(anonymousID: "anon-2", sequences: 0..<3)
        #expect(try await collector.request(body: Frames.frame(second)).status == 200)

        let read = try await Self.recent(collector)
        let events = try #require(read["events"]?.elements)
        #expect(events.map { $0["position"]?.integer } == (1...13).map { $0 })
        #expect(events.map { $0["name"]?.text } == (first + second).map(\.name))
        #expect(events.prefix(10).allSatisfy { $0["batch_id"]?.text == batchID })
        #expect(events.map { $0["distinct_id"]?.text } == (first + second).map(\.distinctID))
        #expect(events[4]["properties"] == .object([.init("price", .double(4))]))
        #expect(read["latest"] == .int(13))
        let feed = try #require(read["feed"]?.text)

        // After a position: only what is newer. A duplicate stores nothing and adds nothing.
        #expect(try await collector.request(body: firstFrame).body.contains(#""duplicate":true"#))
        #expect(try await collector.request(body: Array("not a frame".utf8)).status == 400)
        let after = try await Self.recent(collector, "?after=10")
        #expect(after["events"]?.elements?.map { $0["name"]?.text } == second.map(\.name))
        #expect(after["feed"] == .string(feed))
        let stats = try #require(after["stats"])
        #expect(stats["events_stored"] == .int(13))
        #expect(stats["duplicate_batches"] == .int(1))
        #expect(stats["refused_batches"] == .int(1))
        #expect(stats["rate"]?["counts"]?.elements?.compactMap(\.integer).reduce(0, +) == 13)
        #expect(stats["names"]?.elements?.first?["name"] == .string("ViewProduct"))
        #expect(stats["names"]?.elements?.first?["count"] == .int(9))
        // The same numbers /metrics shows.
        let metrics = try await collector.request("GET", "/metrics").body
        #expect(LiveCounters(prometheusText: metrics) == LiveCounters(eventsStored: 13, duplicateBatches: 1, refusedBatches: 1))
        #expect(metrics.contains("spoor_collector_events_stored_total 13"))

        // A restarted collector is another feed: positions begin again.
        try await collector.restart()
        #expect(try await collector.request(body: Frames.frame(Frames.events(2))).status == 200)
        let restarted = try await Self.recent(collector)
        #expect(restarted["feed"] != .string(feed))
        #expect(restarted["events"]?.elements?.map { $0["position"]?.integer } == [1, 2])
    }

    @Test("Bad queries answer 400 naming the parameter; other methods 405")
    func badQueries() async throws {
        let collector = try await CollectorProcess()
        let cases = [
            ("?after=-5", #"{"error":"bad_query","detail":"after must be a feed position, a whole number from 0, not \"-5\""}"#),
            ("?limit=100000", #"{"error":"bad_query","detail":"limit must be a whole number from 1 to 1000, not \"100000\""}"#),
            ("?after=%205", #"{"error":"bad_query","detail":"after must be a feed position, a whole number from 0, not \" 5\""}"#),
            ("?after=1e3", #"{"error":"bad_query","detail":"after must be a feed position, a whole number from 0, not \"1e3\""}"#),
            ("?since=1", #"{"error":"bad_query","detail":"unknown query parameter \"since\"; the known ones are after and limit"}"#),
            ("?limit=1&limit=1", #"{"error":"bad_query","detail":"query parameter \"limit\" is given more than once"}"#),
        ]
        for (query, body) in cases {
            let answer = try await collector.request("GET", "/v1/events/recent\(query)")
            #expect(answer.status == 400, "\(query)")
            #expect(answer.body == body, "\(query)")
        }
        let post = try await collector.request("POST", "/v1/events/recent", body: [1, 2, 3])
        #expect(post.status == 405 && post.headers["allow"] == "GET")
        // Still up, and still answering.
        #expect(try await collector.request("GET", "/v1/events/recent?after=0&limit=1").status == 200)
    }

    @Test("With --admin-token the events API takes an admin token, and refuses an ingest token with 403; the page itself needs none")
    func tokens() async throws {
        let collector = try await CollectorProcess(arguments: [
            "--token", "ingest-0123456789abcdef", "--admin-token", "alpha-0123456789abcdef", "--admin-token", "beta-0123456789abcdef",
        ])
        let missing = try await collector.request("GET", "/v1/events/recent")
        #expect(missing.status == 401)
        #expect(missing.body == #"{"error":"unauthorized","detail":"a valid Authorization: Bearer token is required"}"#)
        #expect(missing.headers["www-authenticate"] == "Bearer")
        #expect(try await collector.request("GET", "/v1/events/recent", headers: ["Authorization": "Bearer gamma-0123456789abcdef"]).status == 401)
        #expect(try await collector.request("GET", "/v1/events/recent", headers: ["Authorization": "beta-0123456789abcdef"]).status == 401)
        let ingest = try await collector.request("GET", "/v1/events/recent", headers: ["Authorization": "Bearer ingest-0123456789abcdef"])
        #expect(ingest.status == 403)
        let read = try await Self.recent(collector, headers: ["Authorization": "Bearer beta-0123456789abcdef"])
        #expect(read["latest"] == .int(0))
        #expect(try await collector.request("GET", "/").status == 200)
        #expect(try await collector.request("GET", "/assets/live.js").status == 200)
    }

    @Test("--live-events bounds the feed the server keeps; out-of-range values are refused")
    func bound() async throws {
        let collector = try await CollectorProcess(arguments: ["--live-events", "5"])
        #expect(try await collector.request(body: Frames.frame(Frames.events(8))).status == 200)
        let read = try await Self.recent(collector)
        #expect(read["events"]?.elements?.map { $0["position"]?.integer } == [4, 5, 6, 7, 8])
        #expect(read["skipped"] == .int(3))
        #expect(read["stats"]?["events_stored"] == .int(8))
        // A refused value stops the process before it listens, with a message that names the option.
        for value in ["0", "10001", "many"] {
            do {
                _ = try await CollectorProcess(arguments: ["--live-events", value])
                Issue.record("--live-events \(value) was accepted")
            } catch {
                #expect("\(error)".contains("live-events"), "--live-events \(value): \(error)")
            }
        }
    }

    @Test("The feed is what the collector stored, with PostgreSQL as with SQLite")
    func postgres() async throws {
        try await PostgresCluster.with { cluster in
            let collector = try await CollectorProcess(store: cluster.url)
            let events = Frames.events(6)
            let frame = try Frames.frame(events)
            #expect(try await collector.request(body: frame).status == 200)
            #expect(try await collector.request(body: frame).body.contains(#""duplicate":true"#))
            let read = try await Self.recent(collector)
            #expect(read["events"]?.elements?.map { $0["name"]?.text } == events.map(\.name))
            #expect(read["stats"]?["duplicate_batches"] == .int(1))
            #expect(try await cluster.query("SELECT count(*) FROM events") == "6")
        }
    }
}
