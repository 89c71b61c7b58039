import Foundation
import SpoorModel
import SpoorWire
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import Testing

@Suite("POST /v1/batch on a real collector process", .timeLimit(.minutes(10)))
struct BatchEndpointTests {
    @Test("a batch is stored once; the same batch again is a duplicate")
    func storesOnceAndReportsDuplicate() async throws {
        let collector = try await CollectorProcess()
        let id = BatchID.random()
        let frame = try Frames.frame(Frames.events(7), batchID: id)
        let first = try await collector.request(body: frame)
        #expect(first.status == 200)
        #expect(first.body == #"{"batch_id":"\#(id)","events":7,"duplicate":false}"#)
        let second = try await collector.request(body: frame)
        #expect(second.status == 200)
        #expect(second.body == #"{"batch_id":"\#(id)","events":7,"duplicate":true}"#)
        let store = try SQLiteStore(path: collector.databasePath)
        let counts = try store.countsByName()
        #expect(counts.map(\.count).reduce(0, +) == 7)
        #expect(Dictionary(uniqueKeysWithValues: counts.map { ($0.name, $0.count) }) == ["$AppStart": 3, "ViewProduct": 4])
    }

    @Test("the same batch from eight clients at once: stored once, seven duplicates; /metrics shows the groups")
    func concurrentDuplicates() async throws {
        let collector = try await CollectorProcess()
        let frame = try Frames.frame(Frames.events(30))
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await collector.request(body: frame).body } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.filter { $0.hasSuffix(#""duplicate":false}"#) }.count == 1)
        #expect(answers.filter { $0.hasSuffix(#""duplicate":true}"#) }.count == 7)
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 30)
        let metrics = try await collector.request("GET", "/metrics").body
        #expect(metrics.contains(#"spoor_collector_group_events_count{store="sqlite"}"#))
        #expect(metrics.contains(#"spoor_collector_commit_seconds_count{store="sqlite"}"#))
    }

    @Test("a malformed frame gets 400 naming the field and byte, and stores nothing")
    func malformedFrame() async throws {
        let collector = try await CollectorProcess()
        var frame = try Frames.frame(Frames.events(3), codec: .none)
        frame[0] = 0  // break the magic
        let answer = try await collector.request(body: frame)
        #expect(answer.status == 400)
        #expect(answer.headers["content-type"] == "application/json")
        #expect(answer.body == #"{"error":"badMagic","detail":"magic at byte 0: not a Spoor batch frame"}"#)
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().isEmpty)
    }
}
