import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorModel
import SpoorWire
import Testing

@Suite("Bounded by bytes: group commit, the in-flight budget, a batch's row text")
struct ByteBoundsTests {
    @Test("a group stops at its byte limit, however few its events; a batch larger than the limit still commits alone")
    func groupByteLimit() async throws {
        let recorder = GroupCommitTests.Recorder()
        let (group, waiting) = GroupCommitTests.groupCommit(recorder, limits: .init(maxEvents: 1_000_000, maxBytes: 2500))
        func batch(_ id: String, bytes: Int) -> BatchRecord {
            BatchRecord(batchID: id, receivedAt: 0, codec: "none", frame: [UInt8](repeating: 0, count: bytes), eventCount: 1, rows: .empty)
        }
        async let first = group.insert(batch("a", bytes: 1000))
        for await _ in recorder.entered { break }
        let answers = try await withThrowingTaskGroup(of: InsertResult.self) { tasks in
            for id in ["b", "c", "d", "e"] { tasks.addTask { try await group.insert(batch(id, bytes: 1000)) } }
            await GroupCommitTests.waitFor(4, in: waiting)
            recorder.release()
            return try await tasks.reduce(into: [InsertResult]()) { $0.append($1) }
        }
        #expect(try await first == .stored)
        #expect(answers == Array(repeating: .stored, count: 4))
        // 1,000 bytes a batch, 2,500 at most a group: the four that waited go two by two.
        #expect(recorder.groups.map(\.count) == [1, 2, 2])
        #expect(try await group.insert(batch("huge", bytes: 10_000)) == .stored)
    }

    @Test("the in-flight budget: bytes reserved as they come, a slot and its charge taken together or not at all")
    func admission() {
        let budget = Admission(maxRequests: 2, maxBytes: 100)
        #expect(budget.reserve(bytes: 60))
        #expect(!budget.reserve(bytes: 41), "past the bytes")
        #expect(budget.admit(bytes: 40))
        #expect(!budget.admit(bytes: 1), "no byte left")
        budget.release(bytes: 60)
        #expect(budget.admit(bytes: 50))
        #expect(!budget.admit(bytes: 1), "no slot left")
        #expect(budget.current == (requests: 2, bytes: 90))
        budget.finish(bytes: 40)
        budget.finish(bytes: 50)
        #expect(budget.current == (requests: 0, bytes: 0))
        #expect(!Admission(maxRequests: 0, maxBytes: 100).admit(bytes: 0))
    }

    @Test("a batch's row text stops at its cap: never held past it, the rows incomplete, the answer 413 and nothing stored")
    func rowCap() async throws {
        let payload = try FrameDecoder().decode(Frames.frame(Frames.events(1000), codec: .none)).payload
        let whole = try EventRows(payload: payload)
        #expect(whole.isComplete && whole.count == 1000)
        let cut = try EventRows(payload: payload, maxTextBytes: 10_000)
        #expect(!cut.isComplete && cut.text.bytes.count <= 10_000 && cut.count < 1000)
        let store = try SQLiteStore(path: nil)
        let ingest = Ingest(limits: IngestLimits(maxRowBytes: whole.text.bytes.count - 1), store: store)
        let refused = await ingest.handle(try Frames.frame(Frames.events(1000)), receivedAt: 0)
        #expect(refused.status == 413 && refused.body.hasPrefix(#"{"error":"rows_too_large""#), "\(refused.body)")
        #expect(try store.countsByName().isEmpty)
        let small = await ingest.handle(try Frames.frame(Frames.events(10)), receivedAt: 0)
        #expect(small.status == 200)
        #expect(IngestLimits(maxRowBytes: 1 << 30).rowBytes(forPayload: 1000) == 16 * 1000 + (64 << 10))
        #expect(IngestLimits(maxDecompressed: 1 << 40).maxDecompressed == IngestLimits.maxDecompressedLimit)
    }

    @Test("an answer of the live feed holds at most 2 MiB of events: the newest that fit, the others counted as skipped")
    func feedAnswerCap() throws {
        let feed = LiveFeed(capacity: 1000)
        var properties: Properties = [:]
        for key in 0..<8 { properties["p\(key)"] = .string(String(repeating: "x", count: 7000)) }
        for _ in 0..<4 { feed.record(LiveFeedTests.batch(Array(repeating: "Big", count: 50), properties: properties)) }
        let read = feed.read(after: 0, limit: 1000, now: LiveFeedTests.now)
        #expect(read.events.count == 200)
        let json = read.json(counters: LiveCounters())
        #expect(json.utf8.count <= LiveRead.maxEventBytes + (16 << 10), "\(json.utf8.count) bytes")
        let answer = try JSONValue.parse(json)
        let events = try #require(answer["events"]?.elements)
        #expect(events.count > 0 && events.count < 200)
        #expect(answer["skipped"] == .int(Int64(200 - events.count)))
        // The newest ones, oldest of them first.
        #expect(events.last?["position"] == .int(200))
        #expect(events.first?["position"] == .int(Int64(200 - events.count + 1)))
    }
}

