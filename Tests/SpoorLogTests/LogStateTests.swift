import Foundation
import SpoorModel
import SpoorWire
import Testing
import SpoorLog

/// The parts of the log's state on their own, without a file written: where a write goes, what a commit
/// records, what garbage collection may delete, what a failed seal may put back.
@Suite struct LogStateTests {
    static let event: [UInt8] = RecordFormat.frame([0x0A, 0x01, 0x00])
    static let context: [UInt8] = [0x12, 0x01, 0x07]

    /// Framed records to commit, and their sizes.
    static func group(_ records: [[UInt8]]) -> (bytes: [UInt8], sizes: [UInt32]) {
        (records.flatMap { $0 }, records.map { UInt32($0.count) })
    }

    static func file() throws -> OpenFile {
        OpenFile(fd: try FileIO.open("/dev/null", O_RDONLY), path: "/dev/null")
    }

    @Test func aWritePlansANewSegmentThenAppendsToItAndRestatesTheContextOnce() throws {
        var segments = Segments()
        let (bytes, sizes) = Self.group([Self.event, Self.event])
        let first = segments.planWrite(byteCount: bytes.count, startsWithContext: false, leadingContext: Self.context, segmentBytes: 1024)
        #expect(first.file == nil && first.id == 1 && first.start == SegmentFormat.headerSize)
        #expect(first.lead == RecordFormat.frame(Self.context))
        #expect(segments.nextID == 2)
        // Planning changes no count: readers see the records only once the write is committed.
        #expect(segments.liveCount == 0 && segments.list.isEmpty)

        let file = try Self.file()
        let events = bytes.withUnsafeBytes { segments.commitWrite(first, file: file, $0, sizes: sizes) }
        #expect(events == 2)
        #expect(segments.liveCount == 2 && segments.liveBytes == bytes.count)
        #expect(segments.list.map(\.contexts.count) == [1])

        let second = segments.planWrite(byteCount: bytes.count, startsWithContext: false, leadingContext: Self.context, segmentBytes: 1024)
        #expect(second.id == 1 && second.file === file)
        #expect(second.start == first.start + first.lead.count + bytes.count)
        #expect(second.lead.isEmpty, "the segment already ends with that context")
    }

    @Test func aGroupThatDoesNotFitStartsTheNextSegment() throws {
        var segments = Segments()
        let (bytes, sizes) = Self.group(Array(repeating: Self.event, count: 40))
        let first = segments.planWrite(byteCount: bytes.count, startsWithContext: false, leadingContext: nil, segmentBytes: 1024)
        let file = try Self.file()
        bytes.withUnsafeBytes { _ = segments.commitWrite(first, file: file, $0, sizes: sizes) }
        let next = segments.planWrite(byteCount: bytes.count, startsWithContext: false, leadingContext: nil, segmentBytes: 1024)
        #expect(next.id == 2 && next.file == nil)
        #expect(segments.active == nil, "the full segment is written no more")
    }

    @Test func theActiveSegmentIsNeverCollectedAndAFailedWriteLeavesItsNewFileToBeCollected() throws {
        var segments = Segments()
        let (bytes, sizes) = Self.group([Self.event])
        let plan = segments.planWrite(byteCount: bytes.count, startsWithContext: false, leadingContext: nil, segmentBytes: 1024)
        let file = try Self.file()
        bytes.withUnsafeBytes { _ = segments.commitWrite(plan, file: file, $0, sizes: sizes) }
        let drops = (segments.dropOldest(), segments.dropOldest())
        #expect(drops == (true, false))
        // Consumed but active: a write may be going to it.
        #expect(segments.removeConsumed(below: .max).isEmpty)

        // A write that starts segment 2 fails after creating its file: segment 1 is no longer active.
        let failed = Segments.WritePlan(id: segments.nextID, file: nil, start: SegmentFormat.headerSize, lead: [], leadingContext: nil)
        segments.nextID += 1
        segments.commitFailure(failed, created: true)
        #expect(segments.active == nil)
        // An unfinished seal from segment 1 on keeps it.
        #expect(segments.removeConsumed(below: 1).isEmpty)
        #expect(segments.removeConsumed(below: .max) == [1, 2])
        #expect(segments.head == LogPosition(segment: 3, offset: 0))
    }

    @Test func aFailedSealPutsBackItsRecordsUnlessACapDroppedNewerOnes() throws {
        var segments = Segments()
        let (bytes, sizes) = Self.group(Array(repeating: Self.event, count: 5))
        let plan = segments.planWrite(byteCount: bytes.count, startsWithContext: false, leadingContext: nil, segmentBytes: 1 << 20)
        let file = try Self.file()
        bytes.withUnsafeBytes { _ = segments.commitWrite(plan, file: file, $0, sizes: sizes) }

        let taken = segments.take(from: 0, upTo: 2)
        #expect(taken.count == 2)
        #expect(segments.liveCount == 3)
        let restored = segments.restore(segment: 1, first: 0, taken)
        #expect(restored)
        #expect(segments.liveCount == 5 && segments.liveBytes == bytes.count)

        let again = segments.take(from: 0, upTo: 2)
        let dropped = segments.dropOldest()
        let restoredAgain = segments.restore(segment: 1, first: 0, again)
        #expect(dropped && !restoredAgain, "the dropped record would come back with them")
        #expect(segments.liveCount == 2 && segments.list[0].head == 3)
    }

    @Test func memoryHoldsEventsWithTheirContextsAndWritesThemOutInOrder() throws {
        var memory = MemoryFallback()
        let encoder = EventEncoder()
        var group = RecordBuffer()
        try group.append(Fixtures.event(0), using: encoder)
        try group.append(Fixtures.event(1), using: encoder)
        memory.keep(group, leadingContext: Self.context)
        #expect(memory.count == 2 && memory.bytes == group.bytes.count)
        let other: [UInt8] = [0x12, 0x01, 0x09]
        memory.keep(group, leadingContext: other)
        let framed = memory.framed()
        #expect(framed.leadingContext == Self.context)
        // Four events, and one context record where the context changes.
        #expect(framed.sizes.count == 5)
        #expect(RecordFormat.isContext(framed.bytes, at: Int(framed.sizes[0] + framed.sizes[1])))
        memory.removeFirst(3)
        #expect(memory.count == 1 && memory.first?.context == other)
        memory.removeAll()
        #expect(memory.count == 0 && memory.bytes == 0)
    }

    @Test func theOutboxKeepsLogOrderThroughASplit() {
        var outbox = Outbox()
        func entry(_ offset: Int) -> Outbox.Entry {
            let info = SealedBatch(id: .random(), recordCount: 1, codec: .none, frameBytes: 1, sealedAt: 0, isDurable: true)
            return Outbox.Entry(info: info, path: nil, frame: [], end: LogPosition(segment: 1, offset: offset))
        }
        let (a, b, c) = (entry(10), entry(20), entry(30))
        outbox.add(a)
        outbox.add(c)
        outbox.replace(a.info.id, with: [entry(5), b])
        #expect(outbox.entries.map(\.end.offset) == [5, 20, 30])
        let removed = (outbox.remove(b.info.id), outbox.remove(b.info.id))
        #expect(removed == (true, false))
        let all = outbox.removeAll()
        #expect(all.count == 2 && outbox.count == 0)
    }
}
