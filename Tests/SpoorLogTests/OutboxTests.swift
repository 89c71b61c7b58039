import Foundation
import Testing
import SpoorTesting
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorTestSupport

/// Copies a live log's directory, as a crash at this moment would leave it (minus the lock).
func snapshot(_ directory: TemporaryDirectory) throws -> TemporaryDirectory {
    let copy = TemporaryDirectory()
    for name in directory.names() where name != "lock" {
        try FileManager.default.copyItem(atPath: directory.path + "/" + name, toPath: copy.path + "/" + name)
    }
    return copy
}

/// Every event in the log and its outbox: sequence numbers with their counts.
func everything(_ log: EventLog) throws -> [Int] {
    var all = Fixtures.sequences(log)
    for batch in log.pendingBatches() {
        all += try Fixtures.sequences(inBatch: FrameDecoder().decode(log.frame(of: batch.id)).payload)
    }
    return all.sorted()
}

@Suite struct OutboxTests {
    @Test func sealTakesTheOldestRecordsAndKeepsItsIDAcrossRestarts() throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock(wall: 1_700_000_000_000)
        let id: BatchID
        do {
            let log = try open(directory, .init(clock: clock))
            log.append(Fixtures.buffer(0..<250))
            let batch = try #require(try log.seal())
            #expect(batch.recordCount == 100)
            #expect(batch.codec == .preferred)
            #expect(batch.sealedAt == clock.wallMilliseconds())
            #expect(batch.isDurable)
            #expect(log.recordCount == 150)
            #expect(log.counters.sealed == 1)
            id = batch.id
            let frame = try FrameDecoder().decode(log.frame(of: id))
            #expect(frame.header.batchID == id)
            #expect(try Fixtures.sequences(inBatch: frame.payload) == Array(0..<100))
            log.close()
        }
        do {
            let log = try open(directory)
            #expect(log.pendingBatches().map(\.id) == [id])
            #expect(Fixtures.sequences(log) == Array(100..<250))
            try log.release(id)
            #expect(log.pendingBatches().isEmpty)
            #expect(throws: StorageError.self) { try log.release(id) }
            log.close()
        }
        let log = try open(directory)
        #expect(log.pendingBatches().isEmpty)
        #expect(Fixtures.sequences(log) == Array(100..<250))
        #expect(log.counters.released == 1)
    }

    @Test func sealRespectsTheByteLimitButAlwaysTakesOneRecord() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(Fixtures.buffer(0..<10))
        var recordSize = 0
        log.forEachRecord { recordSize = $0.count }
        let batch = try #require(try log.seal(maxRecords: 100, maxBytes: recordSize * 3 + recordSize / 2, codec: .none))
        #expect(batch.recordCount == 3)
        let tiny = try #require(try log.seal(maxRecords: 100, maxBytes: 1, codec: .gzip))
        #expect(tiny.recordCount == 1)
        #expect(log.pendingBatches().map(\.recordCount) == [3, 1])
        #expect(log.recordCount == 6)
        #expect(try everything(log) == Array(0..<10))
        #expect(try log.seal(maxRecords: 100) != nil)
        #expect(try log.seal() == nil)
    }

    @Test func batchesSpanSegmentsAndEmptiedSegmentsGo() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory, .init(segmentBytes: 4096))
        for start in stride(from: 0, to: 300, by: 5) { log.append(Fixtures.buffer(start..<start + 5)) }
        let before = directory.segmentPaths().count
        #expect(before > 10)
        var batches: [SealedBatch] = []
        while let batch = try log.seal() { batches.append(batch) }
        #expect(batches.map(\.recordCount) == [100, 100, 100])
        #expect(directory.segmentPaths().count == 1)
        for batch in batches {
            #expect(try Fixtures.sequences(inBatch: FrameDecoder().decode(log.frame(of: batch.id)).payload).count == 100)
            try log.release(batch.id)
        }
        log.append(Fixtures.buffer(300..<301))
        log.close()
        #expect(Fixtures.sequences(try open(directory)) == [300])
    }

    /// A crash after the batch file is written but before the state file is: the outbox tells where the log resumes.
    @Test func crashAfterSealNeitherLosesNorDuplicates() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(Fixtures.buffer(0..<150))
        try log.sync()
        let batch = try #require(try log.seal(maxRecords: 60))
        let crashed = try snapshot(directory)
        let recovered = try open(crashed)
        #expect(recovered.pendingBatches().map(\.id) == [batch.id])
        #expect(Fixtures.sequences(recovered) == Array(60..<150))
        #expect(try everything(recovered) == Array(0..<150))

        // A crash before the batch file reached its final name: the records are still in the log.
        let torn = try snapshot(directory)
        for name in try FileManager.default.contentsOfDirectory(atPath: torn.path + "/outbox") {
            try FileManager.default.moveItem(atPath: torn.path + "/outbox/" + name, toPath: torn.path + "/outbox/" + name + ".tmp")
        }
        let resealed = try open(torn)
        #expect(resealed.pendingBatches().isEmpty)
        #expect(Fixtures.sequences(resealed) == Array(0..<150))
    }

    @Test func releasedRecordsNeverComeBackEvenWithoutAClose() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(Fixtures.buffer(0..<120))
        let batch = try #require(try log.seal())
        try log.release(batch.id)
        let crashed = try snapshot(directory)
        let recovered = try open(crashed)
        #expect(recovered.pendingBatches().isEmpty)
        #expect(Fixtures.sequences(recovered) == Array(100..<120))
    }

    /// A batch whose file is already gone (another process took it, or someone deleted it) is released all the
    /// same: left listed, it would stop every upload after it.
    @Test func aBatchWhoseFileIsGoneIsReleased() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(Fixtures.buffer(0..<120))
        let first = try #require(try log.seal(maxRecords: 60))
        let second = try #require(try log.seal(maxRecords: 60))
        let outbox = directory.path + "/outbox"
        for name in try FileManager.default.contentsOfDirectory(atPath: outbox) where name.contains(first.id.description) {
            try FileManager.default.removeItem(atPath: outbox + "/" + name)
        }
        try log.release(first.id)
        #expect(log.pendingBatches().map(\.id) == [second.id])
        #expect(log.counters.released == 1)
        try log.release(second.id)
        #expect(log.pendingBatches().isEmpty)
    }

    @Test func outboxIsBounded() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory, .init(maxPendingBatches: 2))
        log.append(Fixtures.buffer(0..<30))
        try log.seal(maxRecords: 10)
        try log.seal(maxRecords: 10)
        do {
            try log.seal(maxRecords: 10)
            Issue.record("expected outboxFull")
        } catch {
            #expect(error.kind == .outboxFull)
        }
        #expect(log.recordCount == 10)
    }

    @Test func damagedBatchFilesAreSetAsideAndCounted() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<20))
            try log.seal(maxRecords: 10)
            try log.seal(maxRecords: 10)
            log.close()
        }
        let outbox = directory.path + "/outbox"
        let names = try FileManager.default.contentsOfDirectory(atPath: outbox).sorted()
        var bytes = FileHandle.bytes(outbox + "/" + names[0])
        bytes[30] ^= 1
        writeBytes(bytes, to: outbox + "/" + names[0])
        writeBytes([1, 2, 3], to: outbox + "/readme.txt")
        let log = try open(directory)
        #expect(log.pendingBatches().count == 1)
        #expect(log.counters.quarantined == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outbox).contains(names[0] + ".bad"))
        let frame = try FrameDecoder().decode(log.frame(of: log.pendingBatches()[0].id))
        #expect(try Fixtures.sequences(inBatch: frame.payload) == Array(10..<20))
    }

    /// After everything was sealed and released no segment file is left; new ones must still come after the head.
    @Test func aLogEmptiedCompletelyKeepsNewRecordsAcrossReopens() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<20))
            log.close()
        }
        do {
            let log = try open(directory)
            let batch = try #require(try log.seal())
            try log.release(batch.id)
            log.close()
        }
        #expect(directory.segmentPaths().isEmpty)
        // A crash after the next appends, before the state file is written again.
        let log = try open(directory)
        log.append(Fixtures.buffer(20..<25))
        let crashed = try snapshot(directory)
        #expect(Fixtures.sequences(try open(crashed)) == Array(20..<25))
        log.close()
        #expect(Fixtures.sequences(try open(directory)) == Array(20..<25))
    }

    /// Appends from several tasks while batches are sealed and released: every event ends up
    /// exactly once in the log, the outbox or a released batch, and the drop counter stays zero.
    @Test func sealingWhileAppendingKeepsEveryEventOnce() async throws {
        let directory = TemporaryDirectory()
        let log = try open(directory, .init(maxRecords: 100_000, segmentBytes: 16 << 10, maxPendingBatches: 10_000))
        let released = await Fixtures.appendConcurrently(to: log, writers: 3, alongside: [{
            var released: [Int] = []
            for round in 0..<300 {
                guard let batch = try? log.seal(maxRecords: 37, codec: round % 2 == 0 ? .preferred : .none) else { continue }
                if round % 3 == 0, let frame = try? FrameDecoder().decode(log.frame(of: batch.id)) {
                    released += (try? Fixtures.sequences(inBatch: frame.payload)) ?? []
                    try? log.release(batch.id)
                }
            }
            return released
        }])
        #expect(try (everything(log) + released).sorted() == Array(0..<9000))
        #expect(log.counters.dropped == 0 && log.counters.corrupt == 0)
        log.close()
        let reopened = try open(directory, .init(maxRecords: 100_000))
        #expect(try (everything(reopened) + released).sorted() == Array(0..<9000))
    }
}
