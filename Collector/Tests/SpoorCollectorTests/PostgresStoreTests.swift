import SpoorCollectorTestSupport
import Foundation
import SpoorModel
import Testing
import SpoorWire

@Suite("The PostgreSQL store, through real collector processes and a real server")
struct PostgresStoreTests {
    @Test("a batch round-trips into the documented schema; the same batch again is a duplicate; SIGTERM stops cleanly")
    func roundTrip() async throws {
        let cluster = try PostgresCluster()
        let collector = try CollectorProcess(store: cluster.url)
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

        #expect(try cluster.query("SELECT batch_id, event_count, codec, bytes FROM batches") == "\(id)|6|zstd|\(frame.count)")
        #expect(try cluster.query("SELECT count(*) FROM events") == "6")
        let row = try cluster.query("""
            SELECT idx, name, type, time_ms, distinct_id, anonymous_id, coalesce(login_id, '-'), coalesce(session_id, '-'),
                   track_id, sequence, lib->>'$lib', properties->>'price' FROM events WHERE idx = 1
            """)
        #expect(row == "1|ViewProduct|track|1700000000001|user-1|anon-1|login-7|-|0000000000009e37|1|Swift|1.0")
        #expect(try cluster.query("SELECT properties->>'note' FROM events WHERE idx = 2") == "quote \" and \u{1F600}")

        let metrics = try await collector.request("GET", "/metrics").body
        #expect(metrics.contains(#"spoor_collector_group_events_count{store="postgres"} 2"#), "two groups committed")

        // `spoor-collector events` reads the same database.
        let counts = try Command.run(try CollectorProcess.binary().path, ["events", "--store", cluster.url])
        #expect(counts == "4\tViewProduct\n2\t$AppStart\n")

        // SIGTERM: the HTTP server stops, then the pool closes its connections, and the process exits 0.
        kill(collector.process.processIdentifier, SIGTERM)
        #expect(try await collector.waitForExit() == 0)
    }

    @Test("two collectors sharing one database get the same batches at the same moment: each stored once")
    func twoCollectorsExactlyOnce() async throws {
        let cluster = try PostgresCluster()
        let left = try CollectorProcess(store: cluster.url)
        let right = try CollectorProcess(store: cluster.url)
        let frames = try (0..<12).map { _ in try Frames.frame(Frames.events(50)) }
        for frame in frames {
            async let fromLeft = left.request(body: frame)
            async let fromRight = right.request(body: frame)
            let answers = try await [fromLeft, fromRight]
            #expect(answers.map(\.status) == [200, 200])
            let duplicates = answers.map { $0.body.hasSuffix(#""duplicate":true}"#) }
            #expect(duplicates.sorted { !$0 && $1 } == [false, true], "one stores it, the other answers duplicate")
        }
        #expect(try cluster.query("SELECT count(*) FROM batches") == "12")
        #expect(try cluster.query("SELECT count(*), count(DISTINCT (batch_id, idx)) FROM events") == "600|600")
    }

    @Test("PostgreSQL down: /healthz and POST answer 503 with Retry-After, and the collector recovers")
    func serverDown() async throws {
        let cluster = try PostgresCluster()
        let collector = try CollectorProcess(store: cluster.url, arguments: ["--store-timeout", "5"])
        let before = try await collector.request(body: try Frames.frame(Frames.events(3)))
        #expect(before.status == 200)
        #expect(try await collector.request("GET", "/healthz").status == 200)

        try cluster.stop()
        // /healthz answers from a check at most a second old.
        let downDeadline = Date().addingTimeInterval(30)
        var health = try await collector.request("GET", "/healthz")
        while health.status == 200, Date() < downDeadline {
            try await Task.sleep(for: .milliseconds(100))
            health = try await collector.request("GET", "/healthz")
        }
        #expect(health.status == 503)
        #expect(health.headers["retry-after"] == "1")
        let frame = try Frames.frame(Frames.events(4))
        let refused = try await collector.request(body: frame)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(refused.body.hasPrefix(#"{"error":"store_unavailable","#))

        try cluster.start()
        let deadline = Date().addingTimeInterval(30)
        var recovered = try await collector.request("GET", "/healthz")
        while recovered.status != 200, Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            recovered = try await collector.request("GET", "/healthz")
        }
        #expect(recovered.status == 200)
        let retried = try await collector.request(body: frame)
        #expect(retried.status == 200)
        #expect(retried.body.hasSuffix(#""duplicate":false}"#))
        #expect(try cluster.query("SELECT count(*) FROM events") == "7")
    }

    @Test("PostgreSQL hanging (stopped with SIGSTOP): 503 within --store-timeout, then 200 once it answers again")
    func serverHangs() async throws {
        let cluster = try PostgresCluster()
        let collector = try CollectorProcess(store: cluster.url, arguments: ["--store-timeout", "1"])
        #expect(try await collector.request(body: try Frames.frame(Frames.events(2))).status == 200)
        try cluster.signalServer(SIGSTOP)
        let frame = try Frames.frame(Frames.events(3))
        let started = ContinuousClock.now
        let refused = try await collector.request(body: frame)
        let waited = ContinuousClock.now - started
        try cluster.signalServer(SIGCONT)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(refused.body == #"{"error":"store_unavailable","detail":"the store is not answering; retry later"}"#)
        #expect(waited < .seconds(10), "answered after the timeout, not after the server came back")
        // The hung insert may still commit once the server runs again; the retry is then a duplicate.
        let retried = try await collector.request(body: frame)
        #expect(retried.status == 200)
        #expect(try cluster.query("SELECT count(*) FROM events") == "5")
    }
}
