import Foundation
import Logging
import SpoorModel
import SpoorSystem
import SpoorTestSupport
import SpoorWire
import Testing
import SpoorLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lifecycle files a gone process left in its log (its checkpoint and crash marker), turned into events in that
/// log by whoever adopts it, exactly once (docs/event-log.md, "Several processes"). The tracker's own recovery is
/// stood in for by one that makes three fixed events from the number in the crash marker, as the crash child's does.
@Suite struct SharedLifecycleTests {
    let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A log whose `crash.marker` holds N stands for the events N, N + 1 and N + 2.
    static let fakeLifecycle = LifecycleRecovery { log in
        let marker = log.directory.appendingPathComponent(StorageLayout.crashMarkerName).path
        guard let bytes = try? FileIO.readFile(marker, limit: 64),
              let first = Int(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        var buffer = RecordBuffer()
        for sequence in first..<first + 3 { try? buffer.append(Fixtures.event(sequence), using: EventEncoder()) }
        return buffer
    }

    func openShared(_ storage: TemporaryDirectory, lifecycle: LifecycleRecovery? = SharedLifecycleTests.fakeLifecycle,
                    durability: Durability = .none) throws -> EventLog {
        try EventLog.openShared(
            storageDirectory: storage.url, configuration: .init(durability: durability, maxPendingBatches: 10_000),
            logger: quiet, claimAfter: .zero, lifecycle: lifecycle)
    }

    /// Writes the lifecycle files of a process into its log directory: the marker names the first recovered event.
    func writeLifecycleFiles(in directory: URL, firstEvent: Int) throws {
        try Data("\(firstEvent)\n".utf8).write(to: directory.appendingPathComponent(StorageLayout.crashMarkerName))
        try Data("checkpoint".utf8).write(to: directory.appendingPathComponent(StorageLayout.lifecycleCheckpointName))
    }

    func exists(_ directory: URL, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path)
    }

    @Test func aGoneLogsLifecycleFilesBecomeItsEventsOnceAndTheEmptiedLogGoes() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<10, to: gone)
        try writeLifecycleFiles(in: gone.directory, firstEvent: 1000)
        gone.close()

        let adopter = try openShared(storage)
        var seen = try stored(storage.url)
        #expect(Set(seen.keys) == Set((0..<10).map(UInt64.init) + [1000, 1001, 1002]))
        #expect(seen.values.allSatisfy { $0 == 1 })
        for name in StorageLayout.lifecycleFileNames + [StorageLayout.lifecycleRecoveredName] {
            #expect(!exists(gone.directory, name), "\(name) left")
        }
        // Sealed with the gone log's own records: nothing left in it to recover again.
        #expect(try EventLog.snapshot(directory: gone.directory).records.isEmpty)
        while adopter.claimFromOthers(limit: 100) > 0 {}
        adopter.close()
        try openShared(storage).close()
        #expect(!FileManager.default.fileExists(atPath: gone.directory.path), "the emptied log was removed")
        seen = try stored(storage.url)
        #expect(seen.count == 13 && seen.values.allSatisfy { $0 == 1 })
    }

    /// A process that cannot make the events (no recovery: `spoor upload`, a bare adopter) seals the records but keeps
    /// the files, and the log with them, for one that can.
    @Test func anAdopterWithoutARecoveryKeepsTheFilesAndTheLog() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<5, to: gone)
        try writeLifecycleFiles(in: gone.directory, firstEvent: 500)
        gone.close()

        let bare = try openShared(storage, lifecycle: nil)
        while bare.claimFromOthers(limit: 100) > 0 {}
        bare.close()
        try openShared(storage, lifecycle: nil).close()
        #expect(FileManager.default.fileExists(atPath: gone.directory.path))
        #expect(exists(gone.directory, StorageLayout.crashMarkerName) && exists(gone.directory, StorageLayout.lifecycleCheckpointName))
        #expect(Set(try stored(storage.url).keys) == Set((0..<5).map(UInt64.init)))

        let able = try openShared(storage)
        while able.claimFromOthers(limit: 100) > 0 {}
        able.close()
        try openShared(storage).close()
        let seen = try stored(storage.url)
        #expect(Set(seen.keys) == Set((0..<5).map(UInt64.init) + [500, 501, 502]))
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(!FileManager.default.fileExists(atPath: gone.directory.path))
    }

    /// An uploader that finds a gone process's log holding lifecycle files (and no segment) adopts it for them.
    @Test func anUploaderAdoptsAGoneLogForItsLifecycleFilesAlone() throws {
        let storage = TemporaryDirectory()
        let running = try openShared(storage)
        let gone = try openShared(storage)
        try writeLifecycleFiles(in: gone.directory, firstEvent: 70)
        gone.close()
        #expect(try stored(storage.url).isEmpty)
        while running.claimFromOthers(limit: 100) > 0 {}
        let seen = try stored(storage.url)
        #expect(Set(seen.keys) == [70, 71, 72] && seen.values.allSatisfy { $0 == 1 })
        #expect(!exists(gone.directory, StorageLayout.crashMarkerName))
        running.close()
    }

    /// What an adopter killed between the steps leaves, made by hand: the note of where the events start, with the
    /// files still there. The log ending past the note means they were written: they are not made again.
    @Test(arguments: [false, true])
    func aNoteTellsTheNextAdopterWhetherTheEventsWereWritten(written: Bool) throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<4, to: gone)
        try writeLifecycleFiles(in: gone.directory, firstEvent: 90)
        let note = Array("\(gone.tailPosition.segment) \(gone.tailPosition.offset)\n".utf8)
        try AtomicFile.write(note, to: gone.directory.appendingPathComponent(StorageLayout.lifecycleRecoveredName).path, durable: false)
        if written { try append(90..<93, to: gone) }
        gone.close()

        let adopter = try openShared(storage)
        adopter.close()
        let seen = try stored(storage.url)
        #expect(Set(seen.keys) == Set((0..<4).map(UInt64.init) + [90, 91, 92]))
        #expect(seen.values.allSatisfy { $0 == 1 }, "\(seen.filter { $0.value != 1 })")
        #expect(!exists(gone.directory, StorageLayout.lifecycleRecoveredName))
    }

    /// A note that is not one (damaged) is ignored: the files are read as new.
    @Test func aDamagedNoteIsIgnored() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<2, to: gone)
        try writeLifecycleFiles(in: gone.directory, firstEvent: 40)
        try Data("9 -1\n".utf8).write(to: gone.directory.appendingPathComponent(StorageLayout.lifecycleRecoveredName))
        gone.close()
        try openShared(storage).close()
        let seen = try stored(storage.url)
        #expect(Set(seen.keys) == [0, 1, 40, 41, 42] && seen.values.allSatisfy { $0 == 1 })
    }

    /// Lifecycle files that stand for no event, with a damaged note and one cut short beside them, go with the log.
    @Test func filesStandingForNothingGoWithTheLog() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try Data("checkpoint".utf8).write(to: gone.directory.appendingPathComponent(StorageLayout.lifecycleCheckpointName))
        try Data("x".utf8).write(to: gone.directory.appendingPathComponent(StorageLayout.lifecycleRecoveredName))
        try Data("1 2".utf8).write(
            to: gone.directory.appendingPathComponent(StorageLayout.temporaryName(for: StorageLayout.lifecycleRecoveredName)))
        gone.close()
        try openShared(storage).close()
        #expect(!FileManager.default.fileExists(atPath: gone.directory.path), "the log was kept")
        #expect(try stored(storage.url).isEmpty)
    }

    /// An adopter SIGKILLed after each step of an adoption of a log with lifecycle files in turn (recovered, noted,
    /// events written, each file removed, each seal, closed, each file of the removal), each next adopter finishing
    /// what the last one left: no event lost, none made or sealed twice.
    @Test(.timeLimit(.minutes(10)))
    func anAdoptionWithLifecycleFilesKilledAtEveryStepLosesAndDoublesNothing() async throws {
        let storage = TemporaryDirectory()
        let synced = try await killedSharedWriter(storage: storage, seed: 11, events: 150)
        #expect(synced == 149)
        let target = try StoredLogs.only(in: storage.url)
        try writeLifecycleFiles(in: target, firstEvent: 5000)
        let expected = Set((0...synced) + [5000, 5001, 5002])

        var stop = 1
        var kinds: Set<String> = []
        while stop < 100 {
            let work = TemporaryDirectory()
            try FileManager.default.removeItem(at: work.url)
            try FileManager.default.copyItem(at: storage.url, to: work.url)
            let adopter = try crashChild(["adopt-stop", work.path, target.lastPathComponent, "\(stop)"])
            let output = await adopter.lines()
            let termination = await adopter.termination(), errors = await adopter.standardError()
            if termination == .exited(0), output.contains(where: { $0.hasPrefix("adopted") }) { break }
            #expect(termination == .signalled(SIGKILL), "\(output) \(errors)")
            if let kind = output.last?.split(separator: " ").last { kinds.insert(String(kind)) }
            var seen = try stored(work.url)
            #expect((0...synced).allSatisfy { seen[$0] == 1 }, "after a stop at step \(stop): \(output)")
            #expect(seen.values.allSatisfy { $0 == 1 }, "after a stop at step \(stop): \(output)")
            let next = try openShared(work, durability: .always)
            while next.claimFromOthers(limit: 10_000) > 0 {}
            next.close()
            try openShared(work).close()
            seen = try stored(work.url)
            #expect(Set(seen.keys) == expected, "finished after a stop at step \(stop)")
            #expect(seen.values.allSatisfy { $0 == 1 }, "finished after a stop at step \(stop)")
            #expect(!FileManager.default.fileExists(atPath: work.path + "/logs/" + target.lastPathComponent), "the emptied log was removed")
            stop += 1
        }
        #expect(kinds == ["recovered", "lifecycleNoted", "lifecycleRecovered", "sealed", "closed", "removed"],
                "stopped after \(stop - 1) steps of kinds \(kinds)")
    }
}
