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

/// Several processes (or several opens in one process) sharing one storage directory: a log each, no lock held while
/// open, adoption of the logs of processes that are gone, claims of other logs' batches (docs/event-log.md, "Several
/// processes").
@Suite struct SharedStorageTests {
    let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func openShared(_ storage: TemporaryDirectory, maxPendingBatches: Int = 16, claimAfter: Duration = .zero) throws -> EventLog {
        try EventLog.openShared(
            storageDirectory: storage.url, configuration: .init(durability: .none, maxPendingBatches: maxPendingBatches),
            logger: quiet, claimAfter: claimAfter)
    }

    /// The ids of the batches waiting in a log directory's `outbox` and `claimed` folders.
    func batchIDs(in directory: String) -> Set<String> {
        var ids = Set<String>()
        for folder in [StorageLayout.outboxName, StorageLayout.claimedFolderName] {
            for name in (try? FileIO.list(directory + "/" + folder)) ?? [] {
                if let parsed = StorageLayout.batch(fromName: name) { ids.insert(parsed.id.description) }
            }
        }
        return ids
    }

    @Test func processLogNamesParseStrictly() {
        let name = StorageLayout.processLogName(pid: 4242, nonce: 0x00ab_cdef_0123_4567)
        #expect(name == "4242-00abcdef01234567")
        #expect(StorageLayout.processLog(fromName: name)?.pid == 4242)
        for foreign in ["+4242-00abcdef01234567", "04242-00abcdef01234567", "4242-00ABCDEF01234567", "0-00abcdef01234567",
                        "4242-abcdef01234567", "4242-00abcdef01234567-1", "rejected", "-1-00abcdef01234567"] {
            #expect(StorageLayout.processLog(fromName: foreign) == nil, "\(foreign)")
        }
    }

    /// Two logs open over one storage directory at once: each has its own directory, neither is refused, and no
    /// lock is held while they are open (a probe takes each directory's lock at once).
    /// A log made in another pid namespace (another container on a shared volume, where the server is often pid 1
    /// too) is never taken for gone, even with this process's own pid; one of this namespace with this pid that is
    /// not open here is.
    @Test func aLogFromAnotherPidNamespaceIsNeverTakenForGone() throws {
        let storage = TemporaryDirectory()
        let area = SharedLogArea(storageDirectory: storage.url)
        try FileManager.default.createDirectory(atPath: area.folder, withIntermediateDirectories: true)
        func make(nonce: UInt64, namespace: String) throws -> SharedLogArea.Member {
            let path = area.folder + "/" + StorageLayout.processLogName(pid: getpid(), nonce: nonce)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try Data("pid \(getpid())\npidns \(namespace)\n".utf8).write(to: URL(fileURLWithPath: path + "/owner"))
            return SharedLogArea.Member(path: path, pid: getpid())
        }
        #expect(!area.isGone(try make(nonce: 1, namespace: "pid:[1]")))
        #expect(area.isGone(try make(nonce: 2, namespace: SharedLogArea.pidNamespace)))
    }

    /// A log folder still under its temporary name (`<pid>-<nonce>.tmp`), left by a process killed before it renamed
    /// the folder to its own, is no member (its name does not parse) and was never removed. The next open removes it
    /// once its maker is gone by the rule of `isGone`, whether or not the maker had written its `owner`; one whose
    /// maker runs, one made in another pid namespace, and one holding a file that is not Spoor's stay.
    @Test func aLogLeftUnderItsTemporaryNameIsRemovedOnceItsMakerIsGone() async throws {
        let storage = TemporaryDirectory()
        let area = SharedLogArea(storageDirectory: storage.url)
        try FileManager.default.createDirectory(atPath: area.folder, withIntermediateDirectories: true)
        let ended = try ChildProcess(URL(fileURLWithPath: "/bin/true"))
        let gonePID = ended.processIdentifier
        #expect(await ended.termination() == .exited(0))
        func building(pid: Int32, nonce: UInt64, owner namespace: String?, ownerName: String = "owner") throws -> String {
            let path = area.folder + "/" + StorageLayout.processLogName(pid: pid, nonce: nonce) + ".tmp"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            if let namespace {
                try Data("pid \(pid)\npidns \(namespace)\n".utf8).write(to: URL(fileURLWithPath: path + "/" + ownerName))
            }
            return path
        }
        let killedAfterOwner = try building(pid: gonePID, nonce: 1, owner: SharedLogArea.pidNamespace)
        let killedDuringOwner = try building(pid: gonePID, nonce: 2, owner: SharedLogArea.pidNamespace, ownerName: "owner.tmp")
        let killedBeforeOwner = try building(pid: gonePID, nonce: 3, owner: nil)
        let ownPIDNotBuildingHere = try building(pid: getpid(), nonce: 4, owner: SharedLogArea.pidNamespace)
        let makerRuns = try building(pid: getppid(), nonce: 5, owner: SharedLogArea.pidNamespace)
        let otherNamespace = try building(pid: gonePID, nonce: 6, owner: "pid:[1]")
        let holdsForeign = try building(pid: gonePID, nonce: 7, owner: SharedLogArea.pidNamespace)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: holdsForeign + "/notes.txt"))

        try openShared(storage).close()
        for removed in [killedAfterOwner, killedDuringOwner, killedBeforeOwner, ownPIDNotBuildingHere] {
            #expect(!FileManager.default.fileExists(atPath: removed), "\(removed) stays")
        }
        for kept in [makerRuns, otherNamespace] {
            #expect(FileManager.default.fileExists(atPath: kept + "/owner"), "\(kept) was removed")
        }
        #expect(FileManager.default.fileExists(atPath: holdsForeign + "/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: holdsForeign + "/owner"))
    }

    @Test func twoOpensGetALogEachAndHoldNoLock() throws {
        let storage = TemporaryDirectory()
        let first = try openShared(storage)
        let second = try openShared(storage)
        #expect(first.directory != second.directory)
        try append(0..<50, to: first)
        try append(50..<100, to: second)
        for log in [first, second] {
            let fd = open(log.directory.path + "/" + StorageLayout.lockName, O_RDWR)
            #expect(fd >= 0)
            #expect(flock(fd, LOCK_EX | LOCK_NB) == 0, "an open log holds its lock")
            close(fd)
        }
        first.close()
        second.close()
        let seen = try stored(storage.url)
        #expect(seen.count == 100 && seen.values.allSatisfy { $0 == 1 })
    }

    /// A log whose maker is gone (here: closed, in this process) is adopted by the next open: its records sealed
    /// into batches in its own outbox, the batch it had sealed kept with its id; its batches are then claimed,
    /// and the emptied log removed by the next adoption.
    @Test func aGoneLogIsAdoptedSealedClaimedAndRemoved() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<250, to: gone)
        let kept = try #require(try gone.seal(maxRecords: 60))
        gone.close()
        let goneDirectory = gone.directory.path

        let adopter = try openShared(storage)
        #expect(adopter.recordCount == 0)
        let ids = batchIDs(in: goneDirectory)
        #expect(ids.contains(kept.id.description))
        #expect(ids.count == 3)  // 60, then 100 and 90
        var seen = try stored(storage.url)
        #expect(seen.count == 250 && seen.values.allSatisfy { $0 == 1 })

        #expect(adopter.claimFromOthers(limit: 16) == 3)
        #expect(Set(adopter.pendingBatches().map(\.id.description)) == ids)
        #expect(batchIDs(in: goneDirectory).isEmpty)
        #expect(adopter.counters.claimed == 3)
        seen = try stored(storage.url)
        #expect(seen.count == 250 && seen.values.allSatisfy { $0 == 1 })
        adopter.close()

        // The next open adopts both: the first is empty and goes; the second holds the claimed batches, which stay.
        let third = try openShared(storage)
        #expect(!FileManager.default.fileExists(atPath: goneDirectory))
        #expect(batchIDs(in: adopter.directory.path) == ids)
        third.close()
    }

    /// The names of the segment files of the log in `directory`, oldest first.
    func segmentPaths(_ directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { StorageLayout.segmentID(fromName: $0) != nil }.sorted().map { directory.path + "/" + $0 }
    }

    /// An uploader that adopts a gone process's log (it found segments there) counts the damage that log's recovery
    /// found as its own, as an adoption at open does: it is the process that found it.
    @Test func anUploaderCountsTheDamageOfALogItAdopts() throws {
        let storage = TemporaryDirectory()
        let uploader = try openShared(storage)
        let gone = try openShared(storage)
        try append(0..<10, to: gone)
        gone.close()
        // A crash mid-write: the last record cut in the middle of its payload.
        let segment = try #require(segmentPaths(gone.directory).last)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        try bytes.dropLast(30).write(to: URL(fileURLWithPath: segment))

        #expect(uploader.counters.tornTails == 0)
        #expect(uploader.claimFromOthers(limit: 16) == 1)
        #expect(uploader.counters.tornTails == 1)
        #expect(uploader.pendingBatches().map(\.recordCount) == [9])
        uploader.close()
    }

    /// A gone process's log whose recovery moved a damaged file aside: once everything Spoor can read has left it,
    /// its own files are removed and the folder, holding only what was set aside, is renamed `<name>.bad` (kept for
    /// support, reported by `spoor inspect`). It is no member any more, so later opens do not adopt it again.
    @Test func anEmptiedLogKeepingDamagedFilesIsSetAsideAndNotAdoptedAgain() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<10, to: gone)
        gone.close()
        let goneDirectory = gone.directory.path
        let damaged = StorageLayout.segmentName(id: 0xFF)
        try Data(repeating: 0x5A, count: 64).write(to: URL(fileURLWithPath: goneDirectory + "/" + damaged))

        let first = try openShared(storage)
        #expect(first.counters.quarantined == 1)
        #expect(first.claimFromOthers(limit: 16) == 1)
        first.close()

        func openRecordingAdoptions() throws -> [String] {
            let adopted = Locked<[String]>([])
            let log = try EventLog.openShared(
                storageDirectory: storage.url, configuration: .init(durability: .none), logger: quiet, claimAfter: .zero,
                afterAdoptionStep: { step, path in if step == .recovered { adopted.withLock { $0.append(path) } } })
            log.close()
            return adopted.withLock { $0 }
        }
        // The emptied log goes from the members, its damaged file kept in the folder set aside.
        #expect(try openRecordingAdoptions().contains(goneDirectory))
        #expect(!FileManager.default.fileExists(atPath: goneDirectory))
        let keptAside = goneDirectory + StorageLayout.quarantineSuffix
        #expect(try FileManager.default.contentsOfDirectory(atPath: keptAside) == [damaged + StorageLayout.quarantineSuffix])
        #expect(!SharedLogArea(storageDirectory: storage.url).members().contains { $0.path.hasPrefix(goneDirectory) })
        // Not adopted again.
        #expect(try !openRecordingAdoptions().contains { $0.hasPrefix(goneDirectory) })
        let seen = try stored(storage.url)
        #expect(seen.count == 10 && seen.values.allSatisfy { $0 == 1 })
    }

    /// A log whose `owner` says it followed fewer erasures of the stored data than were made holds what the user
    /// asked to erase: its batches are never claimed while its process runs (it erases them at its next call), and
    /// once it is gone it is erased, not adopted.
    @Test func aLogThatMissedAnErasureIsErasedNotAdoptedOrClaimed() throws {
        let storage = TemporaryDirectory()
        let made = Locked<UInt64>(0)
        func open() throws -> EventLog {
            try EventLog.openShared(
                storageDirectory: storage.url, configuration: .init(durability: .none, maxPendingBatches: 16), logger: quiet,
                claimAfter: .zero, erasures: { made.withLock { $0 } })
        }
        let missed = try open()
        try append(0..<10, to: missed)
        #expect(try missed.seal(maxRecords: 5) != nil)
        made.withLock { $0 = 1 }  // another process erased; this one has not followed yet
        let other = try open()
        #expect(other.claimFromOthers(limit: 16) == 0, "a batch the user asked to erase was claimed")
        missed.close()  // gone without having followed
        let next = try open()
        #expect(next.claimFromOthers(limit: 16) == 0)
        #expect(try stored(storage.url).isEmpty, "what the user asked to erase was adopted")
        #expect(!FileManager.default.fileExists(atPath: missed.directory.path))
        // A log that followed the erasure is adopted as usual.
        try append(100..<103, to: other)
        other.noteErasuresFollowed(1)
        other.close()
        next.close()
        try open().close()
        #expect(try stored(storage.url).keys.sorted() == [100, 101, 102])
    }

    /// A child process started by another thread while an adoption runs inherits a copy of the adopter's `lock`
    /// descriptor until it calls exec, and with it the lock. An adoption that let its lock go between closing the
    /// log and removing it found the lock taken and left the emptied log behind. Here a duplicate of the adopter's
    /// descriptor (what such a child holds) lives through the whole adoption: the emptied log still goes.
    @Test func aCopyOfTheAdoptersLockHeldElsewhereDoesNotKeepTheEmptiedLog() throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage)
        try append(0..<10, to: gone)
        gone.close()
        let goneDirectory = gone.directory.path
        let adopter = try openShared(storage)
        #expect(adopter.claimFromOthers(limit: 16) == 1)
        adopter.close()

        let area = SharedLogArea(storageDirectory: storage.url)
        let member = try #require(area.members().first { $0.path == goneDirectory })
        let copies = Locked<[Int32]>([])
        area.adopt(member, configuration: .init(durability: .none), logger: quiet, afterStep: { step, path in
            guard step == .recovered, path == goneDirectory else { return }
            let lockPath = goneDirectory + "/" + StorageLayout.lockName
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
                guard let fd = Int32(name),
                      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) == lockPath
                else { continue }
                let copy = dup(fd)
                copies.withLock { $0.append(copy) }
                break  // the copy may take the number the listing's own descriptor had
            }
        })
        let held = copies.withLock { $0 }
        #expect(held.count == 1, "the adopter's lock descriptor was found")
        for fd in held { close(fd) }
        #expect(!FileManager.default.fileExists(atPath: goneDirectory))
        try openShared(storage).close()
    }

    /// The single `log` folder of an older Spoor is adopted like a gone process's log: its records sealed, its
    /// batch kept, both claimed, and the folder removed once empty.
    @Test func anOlderSporsSingleLogIsAdopted() throws {
        let storage = TemporaryDirectory()
        let legacy = try EventLog(directory: storage.file(StorageLayout.logFolderName), configuration: .init(durability: .none), logger: quiet)
        try append(0..<150, to: legacy)
        let kept = try #require(try legacy.seal(maxRecords: 50))
        legacy.close()

        let adopter = try openShared(storage)
        #expect(batchIDs(in: storage.file(StorageLayout.logFolderName).path).contains(kept.id.description))
        #expect(adopter.claimFromOthers(limit: 16) == 2)
        #expect(adopter.pendingBatches().contains { $0.id == kept.id })
        adopter.close()
        try openShared(storage).close()
        #expect(!FileManager.default.fileExists(atPath: storage.file(StorageLayout.logFolderName).path))
        let seen = try stored(storage.url)
        #expect(seen.count == 150 && seen.values.allSatisfy { $0 == 1 })
    }

    /// A batch is claimed only once its log has persisted its head past it: before, a crash of that log would
    /// seal its records again under a new id.
    @Test func aBatchIsClaimedOnlyOnceItsLogsHeadIsPersistedPastIt() throws {
        let storage = TemporaryDirectory()
        let owner = try openShared(storage)
        let claimer = try openShared(storage)
        try append(0..<10, to: owner)
        let batch = try #require(try owner.seal())
        #expect(claimer.claimFromOthers(limit: 4) == 0)
        try owner.sync()
        #expect(claimer.claimFromOthers(limit: 4) == 1)
        #expect(claimer.pendingBatches().map(\.id) == [batch.id])
        owner.close()
        claimer.close()
    }

    /// A running process's batches wait `claimAfter` before another process takes them: it uploads its own.
    @Test func aRunningProcesssBatchWaitsBeforeItIsClaimed() throws {
        let storage = TemporaryDirectory()
        let owner = try openShared(storage)
        let claimer = try openShared(storage, claimAfter: .seconds(3600))
        try append(0..<10, to: owner)
        try owner.seal()
        try owner.sync()
        #expect(claimer.claimFromOthers(limit: 4) == 0)
        owner.close()
        // Gone now (closed): no wait.
        #expect(claimer.claimFromOthers(limit: 4) == 1)
        claimer.close()
    }

    /// The owner of a batch another process claimed: the frame is gone, which is "claimed", not an error or a loss;
    /// the batch leaves its outbox and is counted as claimed away, and a release of it still succeeds.
    @Test func theOwnerOfAClaimedBatchForgetsItAndCountsIt() throws {
        let storage = TemporaryDirectory()
        let owner = try openShared(storage)
        let claimer = try openShared(storage)
        try append(0..<20, to: owner)
        let first = try #require(try owner.seal(maxRecords: 10))
        let second = try #require(try owner.seal(maxRecords: 10))
        try owner.sync()
        #expect(claimer.claimFromOthers(limit: 4) == 2)

        #expect(throws: StorageError.self) { _ = try owner.frame(of: first.id) }
        #expect(owner.pendingBatches().map(\.id) == [second.id])
        #expect(owner.counters.claimedAway == 1)
        // Sent by the owner before the claim, and delivered: its release finds the file gone and is done.
        try owner.release(second.id)
        #expect(owner.pendingBatches().isEmpty)
        #expect(owner.counters.released == 1)
        #expect(owner.counters.sealed == owner.counters.released + owner.counters.claimedAway)
        // The claimer holds both, and reads them.
        for batch in claimer.pendingBatches() { #expect(try FrameDecoder().decode(claimer.frame(of: batch.id)).header.recordCount == 10) }
        owner.close()
        claimer.close()
    }

    /// Two claimers race for the same twenty batches: each batch goes to exactly one of them.
    @Test func twoClaimersRaceAndEachBatchGoesToOne() async throws {
        let storage = TemporaryDirectory()
        let gone = try openShared(storage, maxPendingBatches: 64)
        try append(0..<2000, to: gone)
        while try gone.seal() != nil {}
        gone.close()
        let claimers = [try openShared(storage, maxPendingBatches: 64), try openShared(storage, maxPendingBatches: 64)]
        let counts = await onThreadsOfTheirOwn(claimers.count) { index in claimers[index].claimFromOthers(limit: 64) }
        #expect(counts.reduce(0, +) == 20)
        let sets = claimers.map { Set($0.pendingBatches().map(\.id)) }
        #expect(sets[0].isDisjoint(with: sets[1]))
        #expect(sets[0].count + sets[1].count == 20)
        let seen = try stored(storage.url)
        #expect(seen.count == 2000 && seen.values.allSatisfy { $0 == 1 })
        for claimer in claimers { claimer.close() }
    }

    /// Writers in child processes, two at a time over one storage directory, SIGKILLed at random moments: each
    /// new one adopts the dead ones' logs and claims their batches. Every event a writer reported synced is stored
    /// exactly once, and no event twice.
    @Test(.timeLimit(.minutes(10)))
    func killedWritersRecordsAreAdoptedExactlyOnce() async throws {
        let storage = TemporaryDirectory()
        var random = SplitMix64(seed: 0x5_4A2E)
        var synced: [ClosedRange<UInt64>] = []
        for round in 0..<6 {
            let starts = [UInt64(round * 2) * 1_000_000, UInt64(round * 2 + 1) * 1_000_000]
            let children = try starts.map { try crashChild(["shared-writer", storage.path, "\($0)", "\(random.next())"]) }
            for (child, start) in zip(children, starts) {
                let killAfter = Int.random(in: 1...20, using: &random)
                var count = 0
                var last: UInt64?
                while count < killAfter, let line = await child.nextLine() {
                    let parts = line.split(separator: " ")
                    if parts.first == "synced", parts.count == 2 {
                        last = UInt64(parts[1])
                        count += 1
                    } else if parts.first != "ready" {
                        Issue.record("round \(round): the child said \(line)")
                        break
                    }
                }
                child.kill()
                let termination = await child.termination(), errors = await child.standardError()
                #expect(termination == .signalled(SIGKILL), "\(errors)")
                if let last { synced.append(start...last) }
            }
        }
        // The last open adopts what the last round left.
        let last = try openShared(storage, maxPendingBatches: 10_000)
        while last.claimFromOthers(limit: 10_000) > 0 {}
        last.close()
        let seen = try stored(storage.url)
        #expect(synced.count == 12)
        for range in synced {
            let missing = range.filter { seen[$0] != 1 }
            #expect(missing.isEmpty, "synced events not stored exactly once: \(missing.prefix(10))")
        }
        #expect(seen.values.allSatisfy { $0 == 1 }, "an event stored twice")
        // Every writer's log was adopted and emptied into the last one's claims: nothing is left unsealed.
        #expect(StoredLogs.directories(in: storage.url).allSatisfy { (try? EventLog.snapshot(directory: $0).records.isEmpty) ?? false })
    }

    /// An adopter SIGKILLed after each step of an adoption in turn (recovered, each seal, closed, each file of the
    /// removal), each next adopter finishing what the last one left: no record lost, none sealed twice.
    @Test(.timeLimit(.minutes(10)))
    func anAdoptionKilledAtEveryStepLosesAndDoublesNothing() async throws {
        let storage = TemporaryDirectory()
        // 450 events, then it waits to be killed: the adoption has a known number of steps.
        let synced = try await killedSharedWriter(storage: storage, seed: 7, events: 450)
        #expect(synced == 449)

        let target = try StoredLogs.only(in: storage.url).lastPathComponent
        // Every stop starts from the killed writer's directory as it was, and a next adopter (in this process)
        // finishes what the stopped one left.
        var stop = 1
        var kinds: Set<String> = []
        while stop < 100 {
            let work = TemporaryDirectory()
            try FileManager.default.removeItem(at: work.url)
            try FileManager.default.copyItem(at: storage.url, to: work.url)
            let adopter = try crashChild(["adopt-stop", work.path, target, "\(stop)"])
            let output = await adopter.lines()
            let termination = await adopter.termination(), errors = await adopter.standardError()
            if termination == .exited(0), output.contains(where: { $0.hasPrefix("adopted") }) { break }
            #expect(termination == .signalled(SIGKILL), "\(output) \(errors)")
            if let kind = output.last?.split(separator: " ").last { kinds.insert(String(kind)) }
            var seen = try stored(work.url)
            #expect((0...synced).allSatisfy { seen[$0] == 1 }, "after a stop at step \(stop): \(output)")
            #expect(seen.values.allSatisfy { $0 == 1 }, "after a stop at step \(stop): \(output)")
            let next = try openShared(work, maxPendingBatches: 10_000)
            while next.claimFromOthers(limit: 10_000) > 0 {}
            next.close()
            try openShared(work).close()
            seen = try stored(work.url)
            #expect((0...synced).allSatisfy { seen[$0] == 1 }, "finished after a stop at step \(stop)")
            #expect(seen.values.allSatisfy { $0 == 1 }, "finished after a stop at step \(stop)")
            #expect(!FileManager.default.fileExists(atPath: work.path + "/logs/" + target), "the emptied log was removed")
            for directory in StoredLogs.directories(in: work.url) {
                #expect(try EventLog.snapshot(directory: directory).records.isEmpty, "\(directory.lastPathComponent)")
            }
            stop += 1
        }
        #expect(kinds == ["recovered", "sealed", "closed", "removed"], "stopped after \(stop - 1) steps of kinds \(kinds)")
    }
}
