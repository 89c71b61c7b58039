import Foundation
import SpoorModel
import SpoorWire
import SpoorTestSupport
import Testing
import SpoorLog

/// Context records: what events share, stored once in the log; every reader sees whole events.
@Suite struct ContextRecordTests {
    /// (sequence, distinct id) of every live event, as `forEachRecord` gives them.
    static func whole(_ log: EventLog) throws -> [(Int, String)] {
        var out: [(Int, String)] = []
        try log.forEachRecord { batch in
            for event in try EventDecoder().decodeBatch(batch) {
                #expect(event.lib.lib == "iOS" && event.lib.method == .autoTrack && event.properties["$os"] == .string("iOS"))
                out.append((Int(event.sequence), event.distinctID))
            }
        }
        return out
    }

    static func sealAll(_ log: EventLog, maxRecords: Int = 1000) throws -> [[Event]] {
        var batches: [[Event]] = []
        while let batch = try log.seal(maxRecords: maxRecords, codec: .none) {
            let frame = try FrameDecoder().decode(try log.frame(of: batch.id))
            batches.append(try EventDecoder().decodeBatch(frame.payload))
            #expect(batch.recordCount == batches.last!.count)
            try log.release(batch.id)
        }
        return batches
    }

    @Test func eventsAreWholeForEveryReaderAndContextsAreNotCounted() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(try ContextRuns.buffer([("ann", 0..<5)]))
        #expect(log.recordCount == 5)
        #expect(try Self.whole(log).map(\.0) == Array(0..<5))
        #expect(try Self.whole(log).allSatisfy { $0.1 == "ann" })
        let snapshot = try EventLog.snapshot(directory: directory.url)
        #expect(snapshot.records.count == 5)
        let names = try snapshot.records.flatMap { try EventDecoder().decodeBatch($0.batch).map(\.distinctID) }
        #expect(names == Array(repeating: "ann", count: 5))
        // A lone payload refers to a context it does not carry: not an event by itself.
        #expect(throws: DecodeError.self) { try EventDecoder().decodeBatch(snapshot.records[0].payload) }
        let report = try EventLog.inspect(directory: directory.url)
        #expect(report.liveRecords == 5 && report.segments.map(\.contexts).reduce(0, +) == 1)
    }

    @Test func aBatchEndsWhereTheContextChanges() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(try ContextRuns.buffer([("ann", 0..<3), ("bob", 3..<5)]))
        log.append(try ContextRuns.buffer([("bob", 5..<7)]))
        let batches = try Self.sealAll(log)
        #expect(batches.map { $0.map(\.distinctID) } == [["ann", "ann", "ann"], ["bob", "bob", "bob", "bob"]])
        #expect(batches.flatMap { $0.map(\.sequence) } == Array(0..<7))
        #expect(batches.allSatisfy { $0.allSatisfy { $0.properties["$model"] == .string("iPhone15,2") && $0.sessionID != nil } })
    }

    @Test func aNewSegmentRestatesTheContextAndRecoveryKeepsItBeforeTheHead() throws {
        let directory = TemporaryDirectory()
        var configuration = EventLog.Configuration()
        configuration.segmentBytes = 1024
        do {
            let log = try open(directory, configuration)
            log.append(try ContextRuns.buffer([("ann", 0..<2)]))
            // Groups of events without a context record: each new segment must restate ann's.
            let encoder = EventEncoder()
            for sequence in 2..<40 {
                var buffer = RecordBuffer()
                try buffer.append(ContextRuns.own(sequence), suffix: ContextRuns.reference, using: encoder)
                log.append(buffer)
            }
            #expect(directory.segmentPaths().count >= 3)
            #expect(try Self.whole(log).map(\.1) == Array(repeating: "ann", count: 40))
            // Seal part of a segment, so the head lies after the segment's context record.
            let first = try #require(try log.seal(maxRecords: 3, codec: .none))
            try log.release(first.id)
            log.close()
        }
        let log = try open(directory, configuration)
        #expect(try Self.whole(log).map(\.0) == Array(3..<40))
        let batches = try Self.sealAll(log, maxRecords: 7)
        #expect(batches.flatMap { $0.map(\.sequence) } == Array(3..<40))
        #expect(batches.allSatisfy { $0.allSatisfy { $0.distinctID == "ann" && $0.lib.lib == "iOS" } })
    }

    @Test func recordsHeldInMemoryKeepTheirContexts() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(try ContextRuns.buffer([("ann", 0..<2)]))
        // The disk fails: the next groups are held in memory, one of them switching to bob.
        log.state.withLock { state in
            state.memory.diskFailing = true
            state.memory.retryAt = .max
            state.segments.active = nil
        }
        var encoder = EventEncoder()
        var buffer = RecordBuffer()
        try buffer.append(ContextRuns.own(2), suffix: ContextRuns.reference, using: encoder)
        log.append(buffer)
        log.append(try ContextRuns.buffer([("bob", 3..<5)]))
        #expect(log.state.withLock { $0.memory.count } == 3)
        #expect(try Self.whole(log).map(\.1) == ["ann", "ann", "ann", "bob", "bob"])
        // The disk works again: memory is written out, each run after its context.
        log.state.withLock { $0.memory.retryAt = .min }
        encoder = EventEncoder()
        buffer = RecordBuffer()
        try buffer.append(ContextRuns.own(5), suffix: ContextRuns.reference, using: encoder)
        log.append(buffer)
        #expect(log.state.withLock { $0.memory.count } == 0)
        log.close()
        let reopened = try open(directory)
        #expect(try Self.whole(reopened).map(\.1) == ["ann", "ann", "ann", "bob", "bob", "bob"])
        let batches = try Self.sealAll(reopened)
        #expect(batches.map { $0.map(\.sequence) } == [[0, 1, 2], [3, 4, 5]])
    }

    @Test func sealingFromMemoryEndsWhereTheContextChanges() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.state.withLock { state in
            state.memory.diskFailing = true
            state.memory.retryAt = .max
        }
        log.append(try ContextRuns.buffer([("ann", 0..<2), ("bob", 2..<4)]))
        let batches = try Self.sealAll(log)
        #expect(batches.map { $0.map(\.distinctID) } == [["ann", "ann"], ["bob", "bob"]])
    }

    @Test func droppingTheOldestKeepsTheContextOfTheRest() throws {
        let directory = TemporaryDirectory()
        var configuration = EventLog.Configuration()
        configuration.maxRecords = 4
        let log = try open(directory, configuration)
        log.append(try ContextRuns.buffer([("ann", 0..<10)]))
        #expect(log.counters.dropped == 6)
        #expect(try Self.whole(log).map(\.0) == Array(6..<10))
        log.close()
        #expect(try Self.whole(try open(directory, configuration)).map(\.1) == Array(repeating: "ann", count: 4))
    }

    /// Segments are version 2 since they may hold context records: version 1 ones (older Spoor) are read as
    /// before, and a version this code does not know is moved aside whole rather than misread.
    @Test func segmentVersions() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(try ContextRuns.buffer([("ann", 0..<3)]))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        var bytes = FileHandle.bytes(segment)
        #expect(bytes[4] == 2 && bytes[5] == 0)
        bytes[4] = 1
        writeBytes(bytes, to: segment)
        #expect(try Self.whole(try open(directory)).map(\.0) == [0, 1, 2])
        bytes[4] = 3
        writeBytes(bytes, to: segment)
        let log = try open(directory)
        #expect(log.recordCount == 0 && log.counters.quarantined == 1)
        #expect(directory.names().contains { $0.hasSuffix(".log.bad") })
    }

    @Test func afterAnEraseTheFreshSegmentRestatesTheContext() throws {
        // After an erase the fresh segment gets the context in effect before the next events.
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(try ContextRuns.buffer([("ann", 0..<2)]))
        _ = try log.eraseAll()
        let encoder = EventEncoder()
        var buffer = RecordBuffer()
        try buffer.append(ContextRuns.own(2), suffix: ContextRuns.reference, using: encoder)
        log.append(buffer)
        #expect(try Self.whole(log).map { "\($0.0)\($0.1)" } == ["2ann"])
        log.close()
        #expect(try Self.whole(try open(directory)).map(\.1) == ["ann"])
    }
}
