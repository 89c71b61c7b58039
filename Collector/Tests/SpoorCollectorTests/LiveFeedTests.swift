import Foundation
import SpoorCollectorCore
import SpoorModel
import SpoorWire
import Testing

@Suite("The live feed: bounded memory, positions, per-second counts, names, its JSON and its query", .timeLimit(.minutes(10)))
struct LiveFeedTests {
    static let now: Int64 = 1_800_000_000_000

    /// A stored batch of events named `names`, received at `receivedAt`.
    static func batch(_ names: [String], receivedAt: Int64 = now, properties: Properties = ["price": .double(2.5)],
                      distinctID: String = "user-1") -> BatchRecord {
        let events = names.enumerated().map { index, name in
            Event(name: name, time: 1_767_225_600_000 + Int64(index), trackID: UInt64(index + 1), sequence: UInt64(index),
                  distinctID: distinctID, anonymousID: "anon-1",
                  lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: name.hasPrefix("$") ? .autoTrack : .code),
                  properties: properties)
        }
        return BatchRecord(
            batchID: BatchID.random().description, receivedAt: receivedAt, codec: "zstd", frame: [], eventCount: events.count,
            rows: EventRows(events))
    }

    @Test("Positions count from 1 in the order stored; a reader gets what is after its position, oldest first")
    func positions() {
        let feed = LiveFeed(capacity: 10)
        #expect(feed.read(after: 0, limit: 500, now: Self.now).latest == 0)
        let first = Self.batch(["A", "B", "C"])
        feed.record(first)
        feed.record(Self.batch(["D"]))
        let all = feed.read(after: 0, limit: 500, now: Self.now)
        #expect(all.events.map(\.position) == [1, 2, 3, 4])
        #expect(all.events.map(\.row.name) == ["A", "B", "C", "D"])
        #expect(all.events.prefix(3).allSatisfy { $0.batchID == first.batchID && $0.receivedAt == Self.now })
        #expect(all.events.prefix(3).map(\.row) == first.rows.all)
        #expect(all.latest == 4 && all.skipped == 0 && all.feedID == feed.id)
        #expect(feed.read(after: 2, limit: 500, now: Self.now).events.map(\.position) == [3, 4])
        let caughtUp = feed.read(after: 4, limit: 500, now: Self.now)
        #expect(caughtUp.events.isEmpty && caughtUp.skipped == 0)
        // A limit keeps the newest; what it left out is counted.
        let limited = feed.read(after: 0, limit: 2, now: Self.now)
        #expect(limited.events.map(\.position) == [3, 4] && limited.skipped == 2)
        // Another run of the collector has another id.
        #expect(LiveFeed().id != feed.id)
    }

    @Test("It keeps the newest `capacity` events; those that left are counted as skipped")
    func capacity() {
        let feed = LiveFeed(capacity: 5)
        feed.record(Self.batch(["A", "B", "C"]))
        feed.record(Self.batch(["D", "E", "F", "G", "H"]))
        let read = feed.read(after: 0, limit: 500, now: Self.now)
        #expect(read.events.map(\.position) == [4, 5, 6, 7, 8])
        #expect(read.events.map(\.row.name) == ["D", "E", "F", "G", "H"])
        #expect(read.skipped == 3)
        // A reader at position 1 missed 2 and 3: gone already.
        let behind = feed.read(after: 1, limit: 500, now: Self.now)
        #expect(behind.events.count == 5 && behind.skipped == 2)
        // Round and round the ring: still the newest five, in order.
        for round in 0..<7 { feed.record(Self.batch(["R\(round)"])) }
        #expect(feed.read(after: 0, limit: 500, now: Self.now).events.map(\.row.name) == ["R2", "R3", "R4", "R5", "R6"])
    }

    @Test("It keeps at most `maxBytes` of event text, dropping the oldest")
    func byteBudget() {
        let large: Properties = ["text": .string(String(repeating: "x", count: 3000))]
        let feed = LiveFeed(capacity: 100, maxBytes: 10_000, maxEventBytes: 4096)
        for _ in 0..<10 { feed.record(Self.batch(["Big"], properties: large)) }
        let read = feed.read(after: 0, limit: 500, now: Self.now)
        let held = read.events.reduce(0) { $0 + $1.bytes }
        #expect(read.events.count == 3)
        #expect(held <= 10_000)
        #expect(held + read.events[0].bytes > 10_000)  // one more would not have fitted
        #expect(read.events.map(\.position) == [8, 9, 10])
        #expect(read.events.allSatisfy { $0.omittedBytes == 0 })
    }

    @Test("An event over `maxEventBytes` is kept as a stub: no lib or properties, text fields cut on a character")
    func stub() throws {
        let feed = LiveFeed(capacity: 10, maxEventBytes: 4096)
        let name = String(repeating: "é", count: 300)  // 600 bytes
        let big = Self.batch([name], properties: ["blob": .string(String(repeating: "y", count: 10_000))])
        feed.record(big)
        feed.record(Self.batch(["Small"]))
        let read = feed.read(after: 0, limit: 500, now: Self.now)
        let stub = read.events[0]
        #expect(stub.omittedBytes > 10_000)
        #expect(stub.row.properties == "{}" && stub.row.lib == "{}")
        #expect(stub.row.name == String(repeating: "é", count: 128))  // 256 bytes, whole characters
        #expect(stub.bytes < 4096)
        #expect(read.events[1].omittedBytes == 0 && read.events[1].row.properties == #"{"price":2.5}"#)
        // The JSON says how large it was.
        let json = try JSONValue.parse(read.json(counters: LiveCounters()))
        #expect(json["events"]?.elements?[0]["omitted_bytes"] == .int(Int64(stub.omittedBytes)))
        #expect(json["events"]?.elements?[1]["omitted_bytes"] == nil)
    }

    @Test("Events per second over the last 600 seconds, by the time the collector received them")
    func rate() {
        let feed = LiveFeed()
        feed.record(Self.batch(["A", "B", "C"], receivedAt: Self.now - 5_000))
        feed.record(Self.batch(["D", "E"], receivedAt: Self.now - 4_500))  // the same second
        feed.record(Self.batch(["F"], receivedAt: Self.now - 600_000))  // just out of the window
        feed.record(Self.batch(["G"], receivedAt: Self.now - 599_000))  // the oldest second in it
        feed.record(Self.batch(["H", "I", "J", "K"], receivedAt: Self.now + 999))  // later in the current second
        let rate = feed.read(after: 0, limit: 1, now: Self.now).rate
        #expect(rate.count == LiveFeed.rateSeconds)
        #expect(rate[599] == 4)
        #expect(rate[594] == 5)
        #expect(rate[0] == 1)
        #expect(rate.reduce(0, +) == 10)
        // Ten minutes on, all of that has left the window; the slots are reused for new seconds.
        feed.record(Self.batch(["L"], receivedAt: Self.now + 600_000))
        let later = feed.read(after: 0, limit: 1, now: Self.now + 600_000).rate
        #expect(later.reduce(0, +) == 1 && later[599] == 1)
        // A batch stamped before a slot's current second (the clock stepped back) is not counted in it.
        feed.record(Self.batch(["M"], receivedAt: Self.now))
        #expect(feed.read(after: 0, limit: 1, now: Self.now + 600_000).rate.reduce(0, +) == 1)
    }

    @Test("Counts by name: the most frequent first, at most maxNames names, the rest counted as unlisted")
    func names() {
        let feed = LiveFeed()
        feed.record(Self.batch(["B", "A", "B", "C", "B", "A"]))
        let read = feed.read(after: 0, limit: 1, now: Self.now)
        #expect(read.names.map(\.name) == ["B", "A", "C"])
        #expect(read.names.map(\.count) == [3, 2, 1])
        #expect(read.distinctNames == 3 && read.unlistedEvents == 0)
        feed.record(Self.batch((0..<(LiveFeed.maxNames + 2)).map { "N\($0)" }))
        feed.record(Self.batch(["B"]))  // a name already counted still counts
        let full = feed.read(after: 0, limit: 1, now: Self.now)
        #expect(full.distinctNames == LiveFeed.maxNames)
        #expect(full.unlistedEvents == 5)  // 3 + 1002 names, 1000 counted
        #expect(full.names.count == LiveFeed.topNames)
        #expect(full.names.first?.name == "B" && full.names.first?.count == 4)
    }

    @Test("The JSON: each event's stored columns and batch, the numbers, and text from clients escaped")
    func json() throws {
        let feed = LiveFeed()
        let hostile = #"</script><b>"quoted" \ and"# + "\n\u{01}"
        let record = Self.batch([hostile, "Plain"], receivedAt: Self.now - 1_000, properties: ["k": .string(hostile)])
        feed.record(record)
        let counters = LiveCounters(eventsStored: 7, duplicateBatches: 2, refusedBatches: 3)
        let json = try JSONValue.parse(feed.read(after: 0, limit: 500, now: Self.now).json(counters: counters))
        #expect(json["feed"] == .string(feed.id))
        #expect(json["latest"] == .int(2) && json["skipped"] == .int(0))
        let events = try #require(json["events"]?.elements)
        #expect(events.count == 2)
        for (event, row) in zip(events, record.rows.all) {
            #expect(event["batch_id"] == .string(record.batchID))
            #expect(event["received_at"] == .int(Self.now - 1_000))
            #expect(event["idx"] == .int(Int64(row.idx)))
            #expect(event["name"] == .string(row.name))
            #expect(event["type"] == .string(row.type))
            #expect(event["time_ms"] == .int(row.timeMs))
            #expect(event["distinct_id"] == .string(row.distinctID))
            #expect(event["anonymous_id"] == .string(row.anonymousID))
            #expect(event["login_id"] == .null && event["session_id"] == .null)
            #expect(event["track_id"] == .string(row.trackID))
            #expect(event["sequence"] == .int(row.sequence))
            #expect(event["lib"] == (try JSONValue.parse(row.lib)))
            #expect(event["properties"] == (try JSONValue.parse(row.properties)))
        }
        #expect(events[0]["name"] == .string(hostile))
        #expect(events[0]["properties"]?["k"] == .string(hostile))
        #expect(events[0]["lib"]?["$lib_method"] == .string("code"))
        let stats = try #require(json["stats"])
        #expect(stats["now_ms"] == .int(Self.now))
        #expect(stats["rate"]?["end_s"] == .int(Self.now / 1000))
        #expect(stats["rate"]?["counts"]?.elements?.count == LiveFeed.rateSeconds)
        #expect(stats["rate"]?["counts"]?.elements?[598] == .int(2))
        #expect(stats["names"]?.elements?.count == 2)
        #expect(stats["distinct_names"] == .int(2) && stats["unlisted_events"] == .int(0))
        #expect(stats["events_stored"] == .int(7) && stats["duplicate_batches"] == .int(2) && stats["refused_batches"] == .int(3))
    }

    @Test("The counters come from the /metrics text: refused is every batch answer but 200")
    func counters() {
        let text = """
        # TYPE spoor_collector_requests_total counter
        spoor_collector_requests_total{status="200"} 12
        spoor_collector_requests_total{status="400"} 2
        spoor_collector_requests_total{status="401"} 1
        spoor_collector_requests_total{status="503"} 4.0
        # TYPE spoor_collector_events_stored_total counter
        spoor_collector_events_stored_total 1200
        # TYPE spoor_collector_duplicate_batches_total counter
        spoor_collector_duplicate_batches_total 3
        spoor_collector_bytes_in_total 99999
        spoor_collector_store_seconds_bucket{le="0.005"} 10
        """
        #expect(LiveCounters(prometheusText: text) == LiveCounters(eventsStored: 1200, duplicateBatches: 3, refusedBatches: 7))
        #expect(LiveCounters(prometheusText: "") == LiveCounters())
        #expect(LiveCounters(prometheusText: "spoor_collector_events_stored_total NaN\ngarbage line\n{}") == LiveCounters())
    }

    @Test("The query: after and limit in range, anything else a 400 that names it", arguments: [
        ("after=-1", #"after must be a feed position, a whole number from 0, not \"-1\""#),
        ("after=", #"after must be a feed position, a whole number from 0, not \"\""#),
        ("after=abc", #"after must be a feed position, a whole number from 0, not \"abc\""#),
        ("after=18446744073709551616", #"after must be a feed position, a whole number from 0, not \"18446744073709551616\""#),
        ("after=+3", #"after must be a feed position, a whole number from 0, not \"+3\""#),
        ("limit=0", #"limit must be a whole number from 1 to 1000, not \"0\""#),
        ("limit=1001", #"limit must be a whole number from 1 to 1000, not \"1001\""#),
        ("limit=1.5", #"limit must be a whole number from 1 to 1000, not \"1.5\""#),
        ("cursor=3", #"unknown query parameter \"cursor\"; the known ones are after and limit"#),
        ("after=1&after=2", #"query parameter \"after\" is given more than once"#),
    ])
    func badQuery(query: String, detail: String) throws {
        let parameters = query.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
        }
        guard case .failure(let answer) = LiveQuery.parse(parameters) else {
            Issue.record("\(query) was accepted")
            return
        }
        #expect(answer.status == 400)
        #expect(answer.body == #"{"error":"bad_query","detail":"\#(detail)"}"#)
    }

    @Test("The query's defaults and its largest values; a long value is cut in the message")
    func goodQuery() throws {
        #expect(try LiveQuery.parse([]).get() == LiveQuery(after: 0, limit: 500))
        #expect(try LiveQuery.parse([("after", "18446744073709551615"), ("limit", "1000")]).get()
            == LiveQuery(after: .max, limit: 1000))
        guard case .failure(let answer) = LiveQuery.parse([("after", String(repeating: "9", count: 500))]) else {
            Issue.record("a 500-digit after was accepted")
            return
        }
        #expect(answer.body.count < 200)
    }
}
