import SpoorCollectorTestSupport
import Foundation
import SpoorModel
import Testing
import SpoorWire
#if canImport(Glibc)
import Glibc
#endif

@Suite("The PostgreSQL store, through real collector processes and a real server", .timeLimit(.minutes(10)))
struct PostgresStoreTests {
    @Test("a batch round-trips into the documented schema; the same batch again is a duplicate; SIGTERM stops cleanly")
    func roundTrip() async throws {
        try await PostgresCluster.with { cluster in
            let collector = try await CollectorProcess(store: cluster.url)
            var events = Frames.events(6)
            events[1].loginID = "login-7"
            events[2].properties["note"] = .string("quote \" and \u{1F600}")
            let id = BatchID.random()
            let frame = try Frames.frame(events, batchID: id)
            let first = try await collector.request(body: frame)
            #expect(first.status == 200)
            #expect(first.body == #"{"batch_id":"\#(id)","events":6,"duplicate":false}"#)
            let second = try await collector.request(body: frame)
            #expect(second.body == #"{"batch_id":"\#(id)","events":6,"duplicate":true}"#)

            #expect(try await cluster.query("SELECT batch_id, event_count, codec, bytes FROM batches") == "\(id)|6|zstd|\(frame.count)")
            #expect(try await cluster.query("SELECT count(*) FROM events") == "6")
            let row = try await cluster.query("""
                SELECT idx, name, type, time_ms, distinct_id, anonymous_id, coalesce(login_id, '-'), coalesce(session_id, '-'),
                       track_id, sequence, lib->>'$lib', properties->>'price' FROM events WHERE idx = 1
                """)
            #expect(row == "1|ViewProduct|track|1700000000001|user-1|anon-1|login-7|-|0000000000009e37|1|Swift|1.0")
            #expect(try await cluster.query("SELECT properties->>'note' FROM events WHERE idx = 2") == "quote \" and \u{1F600}")

            let metrics = try await collector.request("GET", "/metrics").body
            #expect(metrics.contains(#"spoor_collector_group_events_count{store="postgres"} 2"#), "two groups committed")

            // `spoor-collector events` reads the same database.
            let counts = try await Command.run(try CollectorProcess.binary().path, ["events", "--store", cluster.url])
            #expect(counts == "4\tViewProduct\n2\t$AppStart\n")

            // SIGTERM: the HTTP server stops, then the pool closes its connections, and the process exits 0.
            collector.signal(SIGTERM)
            #expect(try await collector.waitForExit() == 0)
        }
    }

    @Test("two collectors sharing one database get the same batches at the same moment: each stored once")
    func twoCollectorsExactlyOnce() async throws {
        try await PostgresCluster.with { cluster in
            let left = try await CollectorProcess(store: cluster.url)
            let right = try await CollectorProcess(store: cluster.url)
            let frames = try (0..<12).map { _ in try Frames.frame(Frames.events(50)) }
            for frame in frames {
                async let fromLeft = left.request(body: frame)
                async let fromRight = right.request(body: frame)
                let answers = try await [fromLeft, fromRight]
                #expect(answers.map(\.status) == [200, 200])
                let duplicates = answers.map { $0.body.hasSuffix(#""duplicate":true}"#) }
                #expect(duplicates.sorted { !$0 && $1 } == [false, true], "one stores it, the other answers duplicate")
            }
            #expect(try await cluster.query("SELECT count(*) FROM batches") == "12")
            #expect(try await cluster.query("SELECT count(*), count(DISTINCT (batch_id, idx)) FROM events") == "600|600")
        }
    }

    @Test("PostgreSQL down: /healthz and POST answer 503 with Retry-After, and the collector recovers")
    func serverDown() async throws {
        try await PostgresCluster.with { cluster in
            let collector = try await CollectorProcess(store: cluster.url, arguments: ["--store-timeout", "1"])
            let first = try Frames.frame(Frames.events(3))
            let before = try await TestHTTP.untilStored { try await collector.request(body: first) }
            #expect(before.answer.status == 200)
            // No /healthz before the stop: it answers from the store's last check for a second, and the first one
            // after the stop must ask the store (the healthy answer is checked once the server is back, below).
            try await cluster.stop()
            let health = try await collector.request("GET", "/healthz")
            #expect(health.status == 503)
            #expect(health.headers["retry-after"] == "1")
            let frame = try Frames.frame(Frames.events(4))
            let refused = try await collector.request(body: frame)
            #expect(refused.status == 503)
            #expect(refused.headers["retry-after"] == "1")
            #expect(refused.body.hasPrefix(#"{"error":"store_unavailable","#))

            // Back (perhaps on another port, the same address through the forwarder): the same batch is stored.
            try await cluster.start()
            let retried = try await TestHTTP.untilStored { try await collector.request(body: frame) }
            #expect(retried.answer.status == 200)
            // A refusal after the restart may have been committed after all; only then may the answer be a duplicate.
            #expect(retried.sent > 1 || retried.answer.body.hasSuffix(#""duplicate":false}"#), "\(retried.answer.body)")
            #expect(try await TestHTTP.untilStored { try await collector.request("GET", "/healthz") }.answer.status == 200)
            #expect(try await cluster.query("SELECT count(*) FROM events") == "7")
        }
    }

    @Test("PostgreSQL hanging (stopped with SIGSTOP): 503 once --store-timeout has passed, then 200 once it answers again")
    func serverHangs() async throws {
        try await PostgresCluster.with { cluster in
            let collector = try await CollectorProcess(store: cluster.url, arguments: ["--store-timeout", "1"])
            let first = try Frames.frame(Frames.events(2))
            #expect(try await TestHTTP.untilStored { try await collector.request(body: first) }.answer.status == 200)
            try cluster.signalServer(SIGSTOP)
            let frame = try Frames.frame(Frames.events(3))
            let refused: TestHTTP.Answer
            do {
                refused = try await collector.request(body: frame)
            } catch {
                try cluster.signalServer(SIGCONT)
                throw error
            }
            // The server was stopped until now: only the collector's own timeout can have ended the request.
            try cluster.signalServer(SIGCONT)
            #expect(refused.status == 503)
            #expect(refused.headers["retry-after"] == "1")
            #expect(refused.body == #"{"error":"store_unavailable","detail":"the store is not answering; retry later"}"#)
            // The hung insert may still commit once the server runs again; the retry is then a duplicate.
            #expect(try await TestHTTP.untilStored { try await collector.request(body: frame) }.answer.status == 200)
            #expect(try await cluster.query("SELECT count(*) FROM events") == "5")
        }
    }
}
