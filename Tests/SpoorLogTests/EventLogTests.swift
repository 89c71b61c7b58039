import Foundation
import Testing
import SpoorTesting
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorTestSupport

@Suite struct EventLogTests {
    @Test func appendedRecordsSurviveReopenInOrder() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<50))
            log.append(Fixtures.buffer(50..<120))
            #expect(log.recordCount == 120)
            #expect(log.counters.appended == 120)
            #expect(Fixtures.sequences(log) == Array(0..<120))
            log.close()
        }
        let log = try open(directory)
        #expect(log.recordCount == 120)
        #expect(Fixtures.sequences(log) == Array(0..<120))
        #expect(log.counters.corrupt == 0 && log.counters.tornTails == 0)
    }

    @Test func recordsAreBatchEntriesOfTheEncodedEvent() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(Fixtures.buffer(3..<4))
        var payloads: [[UInt8]] = []
        log.forEachRecord { payloads.append($0) }
        // Map order may differ between encodings, so compare the shape and the decoded event.
        var expected: [UInt8] = []
        try EventEncoder().appendBatchEntry(Fixtures.event(3), to: &expected)
        #expect(payloads.count == 1)
        #expect(payloads.first?.count == expected.count)
        #expect(payloads.first?.prefix(3) == expected.prefix(3))
        #expect(try EventDecoder().decodeBatch(payloads[0]) == [Fixtures.event(3)])
    }

    @Test func segmentsRotateAndConsumedOnesAreDeleted() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory, .init(maxBytes: 64 << 10, segmentBytes: 8 << 10))
        for start in stride(from: 0, to: 2000, by: 10) { log.append(Fixtures.buffer(start..<start + 10)) }
        let segments = directory.segmentPaths()
        #expect(segments.count > 2)
        // Only the newest records fit; the files on disk stay near the cap.
        let onDisk = segments.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
        #expect(onDisk <= (64 << 10) + (8 << 10) + 4096)
        let sequences = Fixtures.sequences(log)
        #expect(sequences.last == 1999)
        #expect(sequences == Array(sequences.first!...1999))
        #expect(log.counters.dropped == UInt64(2000 - sequences.count))
    }

    @Test func recordCapDropsTheOldestAndCountsThem() throws {
        let directory = TemporaryDirectory()
        let recorder = LogCapture()
        do {
            let log = try open(directory, .init(maxRecords: 100), logger: recorder.logger)
            log.append(Fixtures.buffer(0..<60))
            log.append(Fixtures.buffer(60..<250))
            #expect(log.recordCount == 100)
            #expect(log.counters.dropped == 150)
            #expect(Fixtures.sequences(log) == Array(150..<250))
            #expect(recorder.contains(.warning, "event log full"))
            log.close()
        }
        let log = try open(directory, .init(maxRecords: 100))
        #expect(Fixtures.sequences(log) == Array(150..<250))
        #expect(log.counters.dropped == 150)
    }

    @Test func byteCapDropsTheOldest() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory, .init(maxBytes: 16 << 10))
        log.append(Fixtures.buffer(0..<500))
        #expect(log.byteCount <= 16 << 10)
        let sequences = Fixtures.sequences(log)
        #expect(sequences.last == 499)
        #expect(UInt64(500 - sequences.count) == log.counters.dropped)
        #expect(log.counters.dropped > 400)
    }

    @Test func lowerCapsAtReopenApplyToTheRecoveredLog() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<300))
            log.close()
        }
        let log = try open(directory, .init(maxRecords: 50))
        #expect(Fixtures.sequences(log) == Array(250..<300))
        #expect(log.counters.dropped == 250)
    }

    @Test func tornTailIsTruncatedAndOnlyTheLastRecordLost() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<20))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        let bytes = FileHandle.bytes(segment)
        // Cut the last record in the middle of its payload, as a crash mid-write would.
        writeBytes(Array(bytes.dropLast(30)), to: segment)
        do {
            let log = try open(directory)
            #expect(Fixtures.sequences(log) == Array(0..<19))
            #expect(log.counters.tornTails == 1)
            #expect(log.counters.corrupt == 0)
            log.append(Fixtures.buffer(19..<25))
            log.close()
        }
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == Array(0..<25))
        #expect(log.counters.tornTails == 1)
    }

    @Test(arguments: [0, 3, 5, 8, 11, 40])
    func corruptRecordIsSkippedAndItsNeighboursKept(byteInRecord: Int) throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<10))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        var bytes = FileHandle.bytes(segment)
        let recordSize = (bytes.count - SegmentFormat.headerSize) / 10
        bytes[SegmentFormat.headerSize + 4 * recordSize + byteInRecord] ^= 0x5A
        writeBytes(bytes, to: segment)
        do {
            let log = try open(directory)
            #expect(Fixtures.sequences(log) == Array(0..<4) + Array(5..<10))
            #expect(log.counters.corrupt == 1)
            log.close()
        }
        // The region was padded over: a second recovery neither counts it again nor loses more.
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == Array(0..<4) + Array(5..<10))
        #expect(log.counters.corrupt == 1)
    }

    /// Junk shorter than a record header cannot be padded over; it is still counted only once.
    @Test func shortJunkBetweenRecordsIsCountedOnce() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(1..<4))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        var bytes = FileHandle.bytes(segment)
        bytes.insert(contentsOf: [1, 2, 3, 4, 5], at: SegmentFormat.headerSize + (bytes.count - SegmentFormat.headerSize) / 3)
        writeBytes(bytes, to: segment)
        for _ in 0..<3 {
            let log = try open(directory)
            #expect(Fixtures.sequences(log) == [1, 2, 3])
            #expect(log.counters.corrupt == 1)
            log.close()
        }
    }

    @Test func corruptLengthDoesNotSwallowTheRest() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<10))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        var bytes = FileHandle.bytes(segment)
        let recordSize = (bytes.count - SegmentFormat.headerSize) / 10
        // A length that claims the record runs far past its end.
        bytes[SegmentFormat.headerSize + 2 * recordSize + 5] = 0x40
        writeBytes(bytes, to: segment)
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == [0, 1] + Array(3..<10))
        #expect(log.counters.corrupt == 1)
    }

    @Test func corruptionAtTheEndIsCutOffAndCounted() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<10))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        var bytes = FileHandle.bytes(segment)
        bytes[bytes.count - 20] ^= 0xFF
        writeBytes(bytes, to: segment)
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == Array(0..<9))
        #expect(log.counters.corrupt == 1)
        #expect(FileHandle.bytes(segment).count < bytes.count)
    }

    @Test func foreignAndDamagedFilesAreReportedNotFatal() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<5))
            log.close()
        }
        writeBytes(Array("hello".utf8), to: directory.path + "/notes.txt")
        // A file named like a segment that is not one, and one whose header was cut short.
        writeBytes(Array(repeating: 0x41, count: 100), to: directory.path + "/" + StorageLayout.segmentName(id: 0x100))
        writeBytes(Array(SegmentFormat.header(id: 0x200).prefix(5)), to: directory.path + "/" + StorageLayout.segmentName(id: 0x200))
        let recorder = LogCapture()
        let log = try open(directory, logger: recorder.logger)
        #expect(Fixtures.sequences(log) == Array(0..<5))
        #expect(log.counters.quarantined == 1)
        #expect(recorder.contains(.warning, "not Spoor's"))
        #expect(recorder.contains(.error, "moved aside"))
        let names = directory.names()
        #expect(names.contains("notes.txt"))
        #expect(names.contains(StorageLayout.segmentName(id: 0x100) + ".bad"))
        #expect(!names.contains(StorageLayout.segmentName(id: 0x200)))
        // New records go after every segment id seen, so order is kept.
        log.append(Fixtures.buffer(5..<8))
        log.close()
        let reopened = try open(directory)
        #expect(Fixtures.sequences(reopened) == Array(0..<8))
    }

    @Test func damagedStateFileIsSetAsideAndTheLogRecovered() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<5))
            log.close()
        }
        writeBytes(Array(repeating: 7, count: 96), to: directory.path + "/state")
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == Array(0..<5))
        #expect(log.counters.corrupt == 1)
    }

    @Test func aSecondLogOnTheSameDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        #expect(throws: StorageError.self) { try open(directory) }
        do {
            _ = try open(directory)
        } catch let error as StorageError {
            #expect(error.kind == .directoryInUse)
        }
        log.close()
        let reopened = try open(directory)
        reopened.close()
    }

    @Test func invalidConfigurationIsATypedError() {
        let directory = TemporaryDirectory()
        do {
            _ = try open(directory, .init(maxRecords: 0))
            Issue.record("expected an error")
        } catch let error as StorageError {
            #expect(error.kind == .invalidConfiguration)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func unusableDirectoryKeepsEventsInMemory() throws {
        let directory = TemporaryDirectory()
        writeBytes([1, 2, 3], to: directory.path + "/file")
        let recorder = LogCapture()
        // A directory below a regular file can never be created.
        let log = try EventLog(directory: directory.file("file/sub"), configuration: .init(maxRecords: 30), logger: recorder.logger)
        log.append(Fixtures.buffer(0..<50))
        #expect(Fixtures.sequences(log) == Array(20..<50))
        #expect(log.counters.dropped == 20)
        #expect(log.counters.writeErrors >= 1)
        #expect(recorder.contains(.error, "memory"))
        #expect(throws: StorageError.self) { try log.sync() }
        let batch = try #require(try log.seal(maxRecords: 100))
        #expect(!batch.isDurable)
        let frame = try FrameDecoder().decode(log.frame(of: batch.id))
        #expect(try Fixtures.sequences(inBatch: frame.payload) == Array(20..<50))
    }

    @Test(arguments: [Durability.none, .always, .batched(interval: .milliseconds(10))])
    func everyDurabilityKeepsRecordsAcrossReopen(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let clock = ManualClock(wall: 1_700_000_000_000)
        do {
            let log = try open(directory, .init(durability: durability, clock: clock))
            for start in stride(from: 0, to: 100, by: 10) {
                log.append(Fixtures.buffer(start..<start + 10))
                clock.advance(by: .milliseconds(7))
            }
            try log.sync()
            log.close()
        }
        let log = try open(directory, .init(durability: durability))
        #expect(Fixtures.sequences(log) == Array(0..<100))
    }

    @Test func appendsAfterCloseAreCountedAsDropped() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.close()
        log.append(Fixtures.buffer(0..<3))
        #expect(log.counters.dropped == 3)
        #expect(throws: StorageError.self) { try log.sync() }
    }

    @Test func concurrentAppendsKeepEveryRecord() async throws {
        let directory = TemporaryDirectory()
        let log = try open(directory, .init(maxRecords: 100_000))
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let encoder = EventEncoder()
                    for start in stride(from: writer * 1000, to: writer * 1000 + 1000, by: 25) {
                        log.append(Fixtures.buffer(start..<start + 25, encoder: encoder))
                    }
                }
            }
        }
        #expect(Fixtures.sequences(log).sorted() == Array(0..<4000))
        log.close()
        #expect(Fixtures.sequences(try open(directory, .init(maxRecords: 100_000))).sorted() == Array(0..<4000))
    }
}

@Suite struct RecordShapeTests {
    @Test func entriesThatAreNotOneBatchEntryAreRejected() throws {
        var buffer = RecordBuffer()
        buffer.append(entry: [0x0A, 0x01, 0x00])
        buffer.append(entry: [0x12, 0x01, 0x00])
        buffer.append(entry: [0x0A, 0x05, 0x00])
        buffer.append(entry: [])
        #expect(buffer.count == 1)
        #expect(buffer.rejected == 3)
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(buffer)
        #expect(log.recordCount == 1)
        #expect(log.counters.dropped == 3)
    }

    /// A record whose checksum is right but whose payload is neither an event nor a context entry is treated
    /// as damage.
    @Test func aForgedRecordIsCorrupt() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<2))
            log.close()
        }
        let segment = try #require(directory.segmentPaths().last)
        var forged = [UInt8](repeating: 0, count: RecordFormat.headerSize) + [0x1A, 0x01, 0x00]
        forged.withUnsafeMutableBytes { RecordFormat.writeHeader(into: $0, at: 0, payloadLength: 3) }
        var bytes = FileHandle.bytes(segment)
        var payloadSizes: [Int] = []
        try open(directory).forEachRecord { payloadSizes.append($0.count) }
        bytes.insert(contentsOf: forged, at: SegmentFormat.headerSize + RecordFormat.headerSize + payloadSizes[0])
        writeBytes(bytes, to: segment)
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == [0, 1])
        #expect(log.counters.corrupt == 1)
    }
}
