import Foundation
import Testing
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorTestSupport

@Suite struct StorageLayoutTests {
    @Test func segmentNamesRoundTrip() {
        for id: UInt64 in [0, 1, 0xAB, 0x1234_5678_9ABC_DEF0, .max] {
            let name = StorageLayout.segmentName(id: id)
            #expect(StorageLayout.segmentID(fromName: name) == id)
            #expect(StorageLayout.logEntry(name) == .segment(id: id))
        }
    }

    @Test func batchNamesRoundTrip() {
        let id = BatchID.random()
        for end in [LogPosition(segment: 0, offset: 0), LogPosition(segment: 0x1F, offset: 4096), LogPosition(segment: .max, offset: 0xFFFF_FFFF)] {
            let name = StorageLayout.batchName(end: end, id: id)
            let parsed = StorageLayout.batch(fromName: name)
            #expect(parsed?.id == id)
            #expect(parsed?.end == end)
        }
    }

    @Test func rejectedNamesRoundTripWithTheStatusClamped() {
        let id = BatchID.random()
        for (time, status, kept) in [(Int64(1_700_000_000_000), 400, 400), (0, 7, 7), (-1, 1234, 999), (.max, -5, 0)] {
            let name = StorageLayout.rejectedName(setAsideAt: time, id: id, status: status)
            let parsed = StorageLayout.rejected(fromName: name)
            #expect(parsed?.setAsideAt == time)
            #expect(parsed?.id == id)
            #expect(parsed?.status == kept)
        }
    }

    @Test func everyFixedNameIsKnownInItsDirectory() {
        #expect(StorageLayout.logEntry(StorageLayout.lockName) == .lock)
        #expect(StorageLayout.logEntry(StorageLayout.logStateName) == .state)
        #expect(StorageLayout.logEntry(StorageLayout.outboxName) == .outbox)
        #expect(StorageLayout.logEntry(StorageLayout.uploadCountersName) == .uploadCounters)
        #expect(StorageLayout.logEntry(StorageLayout.rejectedFolderName) == .rejectedFolder)
        #expect(StorageLayout.logEntry(StorageLayout.temporaryName(for: StorageLayout.logStateName)) == .temporary)
        #expect(StorageLayout.logEntry(StorageLayout.segmentName(id: 3) + StorageLayout.quarantineSuffix) == .quarantined)
        for name in [StorageLayout.trackerStateName, StorageLayout.corruptTrackerStateName, StorageLayout.lifecycleCheckpointName,
                     StorageLayout.crashMarkerName, StorageLayout.logFolderName] {
            #expect(StorageLayout.isTrackerEntry(name), "\(name)")
        }
        #expect(StorageLayout.isStorageDirectory(holding: [StorageLayout.logFolderName]))
        #expect(!StorageLayout.isStorageDirectory(holding: [StorageLayout.logFolderName, StorageLayout.logStateName]))
        // A process's log holds lifecycle files of its own; an older Spoor's storage directory held them beside `log`.
        for name in [StorageLayout.lifecycleCheckpointName, StorageLayout.crashMarkerName, StorageLayout.lifecycleRecoveredName] {
            #expect(StorageLayout.logEntry(name) == .lifecycle, "\(name)")
        }
        #expect(!StorageLayout.isStorageDirectory(holding: [StorageLayout.ownerName, StorageLayout.lifecycleCheckpointName, StorageLayout.crashMarkerName]))
        #expect(StorageLayout.isStorageDirectory(holding: [StorageLayout.lifecycleCheckpointName, StorageLayout.crashMarkerName]))
    }

    /// Names close to ours, as a stray tool or an attacker with write access to the directory might leave.
    static let hostileNames = [
        "seg-+000000000000001.log", // a sign is not a digit
        "seg-000000000000000A.log", // ours are lower case
        "seg-00000000000000001.log", "seg-000000000000001.log", "seg-.log", "seg-zzzzzzzzzzzzzzzz.log",
        "seg-ééééééé.log", "seg-0000000000000001.log.tmp", ".bad", "state.json.notes", "lockfile",
        "000000000000001f-00001000-" + String(repeating: "a", count: 32) + ".spb.tmp.bak",
        "+00000000000001f-00001000-" + String(repeating: "a", count: 32) + ".spb",
        "000000000000001f-+0001000-" + String(repeating: "a", count: 32) + ".spb",
        "000000000000001f-00001000-" + String(repeating: "A", count: 32) + ".spb",
        "000000000000001f-00001000-" + String(repeating: "a", count: 32) + "-.spb",
        "000000000000001f--00001000-" + String(repeating: "a", count: 32) + ".spb",
        "0000000000000001-" + String(repeating: "a", count: 32) + "-+40.spb",
        "0000000000000001-" + String(repeating: "a", count: 32) + "-4000.spb",
        String(repeating: "-", count: 300) + ".spb", "junk.spb", "", "\u{0}",
    ]

    @Test(arguments: hostileNames) func hostileNamesAreNeverTakenForOurs(_ name: String) {
        #expect(StorageLayout.segmentID(fromName: name) == nil)
        #expect(StorageLayout.batch(fromName: name) == nil)
        #expect(StorageLayout.rejected(fromName: name) == nil)
        #expect(!StorageLayout.isUnfinishedBatch(name))
        #expect(!StorageLayout.isTrackerEntry(name))
        #expect(StorageLayout.logEntry(name) == nil || name.hasSuffix(StorageLayout.quarantineSuffix))
    }

    /// Files in a log directory and its outbox that look almost like ours are left alone: not read as
    /// segments, not quarantined, not deleted, and the log's own records come back whole.
    @Test func hostileFilesInALogDirectoryAreLeftAlone() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<5))
            log.close()
        }
        let hostile = ["seg-+000000000000001.log", "seg-000000000000000A.log"]
        for name in hostile {
            writeBytes(SegmentFormat.header(id: 1) + Array(repeating: 0x41, count: 40), to: directory.path + "/" + name)
        }
        let outboxHostile = ["notes.tmp", "+00000000000001f-00001000-" + String(repeating: "a", count: 32) + ".spb"]
        for name in outboxHostile {
            writeBytes(Array("not a batch".utf8), to: directory.path + "/" + StorageLayout.outboxName + "/" + name)
        }
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == Array(0..<5))
        #expect(log.counters.quarantined == 0)
        #expect(log.counters.corrupt == 0)
        #expect(log.pendingBatches().isEmpty)
        let names = directory.names()
        for name in hostile { #expect(names.contains(name), "\(name)") }
        let outbox = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/" + StorageLayout.outboxName)
        for name in outboxHostile { #expect(outbox.contains(name), "\(name)") }
        log.close()
    }

    /// A batch write that did not reach its rename is removed at open: its records are still in the log.
    @Test func anUnfinishedBatchWriteIsRemovedAtOpen() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory)
            log.append(Fixtures.buffer(0..<5))
            log.close()
        }
        let unfinished = StorageLayout.temporaryName(
            for: StorageLayout.batchName(end: LogPosition(segment: 1, offset: 64), id: BatchID.random()))
        #expect(StorageLayout.isUnfinishedBatch(unfinished))
        writeBytes(Array("half a frame".utf8), to: directory.path + "/" + StorageLayout.outboxName + "/" + unfinished)
        let log = try open(directory)
        #expect(Fixtures.sequences(log) == Array(0..<5))
        let outbox = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/" + StorageLayout.outboxName)
        #expect(!outbox.contains(unfinished))
        log.close()
    }

    /// The one whole-file writer replaces the content and leaves no temporary file behind, durable or not.
    @Test(arguments: [true, false]) func theAtomicWriterReplacesTheWholeFile(_ durable: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/" + StorageLayout.uploadCountersName
        try AtomicFile.write(Array("first, and longer".utf8), to: path, durable: durable)
        try AtomicFile.write(Array("second".utf8), to: path, durable: durable)
        #expect(FileHandle.bytes(path) == Array("second".utf8))
        #expect(directory.names() == [StorageLayout.uploadCountersName])
    }

    @Test func theAtomicWriterReportsAMissingDirectory() throws {
        let directory = TemporaryDirectory()
        #expect(throws: StorageError.self) {
            try AtomicFile.write([1, 2, 3], to: directory.path + "/missing/file", durable: true)
        }
        #expect(directory.names().isEmpty)
    }
}
