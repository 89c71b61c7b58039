import Foundation
import SpoorLog
import SpoorModel
import SpoorWire
import SpoorSystem
import SpoorTestSupport
import SpoorTesting
import Testing

@testable import SpoorTracker

/// Several trackers over one storage directory (what several processes sharing it see; two opens in one process
/// share nothing but the files): identity, super properties and consent are one state, changed by a
/// read-modify-write under the state lock and picked up by the others' next event; sequence numbers are leased in
/// blocks so no two events share (anonymous id, sequence) (docs/event-log.md, "Several processes").
@Suite struct SharedStateTests {
    /// Two trackers on one fresh directory and one clock, each with its own store.
    func pair() throws -> (Harness, Harness) {
        let first = try Harness()
        return (first, try first.restarted())
    }

    @Test func aLoginInOneIsCarriedByTheOthersNextEvent() async throws {
        let (a, b) = try pair()
        b.tracker.track("Before")
        a.tracker.login("user-42")
        await a.tracker.flush()  // the writer saved the change
        b.tracker.track("After")
        let events = await b.flushedEvents()
        #expect(events.map(\.name) == ["Before", "After"])
        #expect(events.first?.distinctID != "user-42")
        #expect(events.last?.distinctID == "user-42" && events.last?.loginID == "user-42")
        #expect(b.tracker.loginID == "user-42")
        // A log-out there comes back here.
        b.tracker.logout()
        await b.tracker.flush()
        #expect(a.tracker.loginID == nil)
    }

    @Test func changesInBothAreBothKept() async throws {
        let (a, b) = try pair()
        // Neither has seen the other's change when it makes its own: the saves must not undo each other.
        a.tracker.registerSuperProperties(["fromA": "a"])
        b.tracker.registerSuperProperties(["fromB": "b"])
        await a.tracker.flush()
        await b.tracker.flush()
        a.tracker.track("E")
        b.tracker.track("E")
        for harness in [a, b] {
            let event = try #require(await harness.flushedEvents().last)
            #expect(event.properties["fromA"] == "a" && event.properties["fromB"] == "b")
        }
        let file = try #require(PersistentStateFile(directory: a.directory.url).read())
        #expect(file.superProperties == ["fromA": StoredValue("a"), "fromB": StoredValue("b")])
    }

    @Test func anOptOutInOneStopsTheOther() async throws {
        let (a, b) = try pair()
        b.tracker.track("Kept")
        await a.tracker.optOut()
        b.tracker.track("NotRecorded")
        #expect(b.tracker.isOptedOut)
        #expect(await b.flushedEvents().map(\.name) == ["Kept"])
        b.tracker.optIn()
        await b.tracker.flush()
        a.tracker.track("Again")
        #expect(!a.tracker.isOptedOut)
        #expect(await a.flushedEvents().map(\.name) == ["Again"])
    }

    @Test func anErasureInOneErasesTheOthersStore() async throws {
        let (a, b) = try pair()
        for n in 0..<5 { b.tracker.track("B", properties: ["n": .int(Int64(n))]) }
        #expect(await b.flushedEvents().count == 5)
        await a.tracker.optOut(deleteStoredData: true)
        // The other tracker follows at its next call: its stored events go, and nothing more is recorded.
        b.tracker.track("Refused")
        await b.tracker.flush()
        #expect(b.store.events.isEmpty)
        #expect(b.tracker.isOptedOut)
    }

    /// A tracker that sees another's erasure only at its next call erases what it held then, not what it accepted
    /// after it saw it.
    @Test func anErasureFollowedLateKeepsWhatCameAfter() async throws {
        let (a, b) = try pair()
        b.tracker.track("Before")
        #expect(await b.flushedEvents().map(\.name) == ["Before"])
        await a.tracker.optOut(deleteStoredData: true)
        a.tracker.optIn()
        await a.tracker.flush()
        b.tracker.track("After")  // sees the erasure and the opt-in at once
        #expect(await b.flushedEvents().map(\.name) == ["After"])
    }

    /// A tracker following another's erasure erases its own log only: a process that started after the erasure
    /// and has ended meanwhile keeps what it recorded (its log waits for adoption), and only the process that
    /// erased erases the logs of processes that are gone.
    @Test func followingAnErasureLeavesTheLogsOfOthers() async throws {
        let harness = EventLogTests.LogHarness()
        let a = try harness.tracker(), b = try harness.tracker()
        b.track("BBefore")
        await b.flush()
        await a.optOut(deleteStoredData: true)
        a.optIn()
        await a.flush()
        let c = try harness.tracker()
        c.track("CAfter")
        #expect(await c.shutdown(timeout: testBound))
        b.track("BAfter")
        await b.flush()
        #expect(await a.shutdown(timeout: testBound))
        #expect(await b.shutdown(timeout: testBound))
        let names = try harness.readBack().events.map(\.name).filter { !$0.hasPrefix("$") }
        #expect(names.sorted() == ["BAfter", "CAfter"])
    }

    /// A process that tracks nothing more still stops uploading once another opted out: its uploader asks before
    /// each batch.
    @Test func anIdleTrackersUploaderStopsAtAnotherProcesssOptOut() async throws {
        let directory = TemporaryDirectory()
        let client = ScriptedHTTPClient()
        func make() throws -> Tracker {
            var configuration = Configuration(storageDirectory: directory.url)
            configuration.upload.serverURL = URL(string: "http://collector.test")
            configuration.upload.httpClient = client
            configuration.clock = ManualClock(wall: testEpoch)
            configuration.storage.durability = .none
            configuration.tracking.presetOverrides = testPresets
            return try Tracker(configuration: configuration)
        }
        let a = try make(), b = try make()
        // The launch's look at leftovers is over before anything is tracked.
        #expect(await b.uploader?.nextPass(timeout: testBound) == true)
        b.track("Waiting")
        #expect(await b.stored())
        await a.optOut()
        // A trigger (the flush interval, the bulk size) with no call to this tracker since: nothing goes.
        #expect(await b.uploader?.nextPass(timeout: testBound) == true)
        #expect(client.requests.isEmpty, "\(client.requests.count) requests")
        let result = await b.flush(timeout: testBound)
        #expect(client.requests.isEmpty, "\(client.requests.count) requests")
        #expect(result.pendingReason == .optedOut)
        #expect(result.pendingEvents == 1)
        a.optIn()
        await a.flush(timeout: testBound)
        // Consent given again there: the waiting event goes at this tracker's next upload (started by the flush, or
        // already by the consent coming back).
        let after = await b.flush(timeout: testBound)
        #expect(after.isComplete && after.pendingEvents == 0)
        #expect(client.requests.count == 1)
        #expect(await a.shutdown(timeout: testBound))
        #expect(await b.shutdown(timeout: testBound))
    }

    /// The process that erases erases what processes that are gone left too: their logs, emptied logs set aside
    /// for damaged files, the batches the collector refused, a damaged state file kept aside.
    @Test func anErasureTakesWhatGoneProcessesLeft() async throws {
        let harness = EventLogTests.LogHarness()
        let a = try harness.tracker()
        let c = try harness.tracker()
        for _ in 0..<3 { c.track("Gone") }
        #expect(await c.shutdown(timeout: testBound))
        let logs = harness.directory.path + "/" + StorageLayout.logsFolderName
        let setAside = logs + "/99999-00000000000000ff" + StorageLayout.quarantineSuffix
        try FileManager.default.createDirectory(atPath: setAside + "/outbox", withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: setAside + "/outbox/x.spb.bad"))
        let rejected = logs + "/" + StorageLayout.rejectedFolderName
        try FileManager.default.createDirectory(atPath: rejected, withIntermediateDirectories: true)
        let refused = StorageLayout.rejectedName(setAsideAt: 1, id: BatchID(hex: "00112233-4455-6677-8899-aabbccddeeff")!, status: 400)
        try Data([4, 5]).write(to: URL(fileURLWithPath: rejected + "/" + refused))
        try Data("{}".utf8).write(to: harness.directory.url.appendingPathComponent(StorageLayout.corruptTrackerStateName))

        // A set-aside name that is a symbolic link to a folder elsewhere: the link may go, never what it points to.
        let elsewhere = TemporaryDirectory()
        try Data([9]).write(to: elsewhere.url.appendingPathComponent("keep.txt"))
        try FileManager.default.createSymbolicLink(atPath: logs + "/88888-00000000000000ee.bad", withDestinationPath: elsewhere.path)

        let erased = await a.optOut(deleteStoredData: true)
        #expect(FileManager.default.fileExists(atPath: elsewhere.path + "/keep.txt"), "a file outside the storage directory was deleted")
        #expect(erased.records >= 3, "\(erased)")
        #expect(erased.batches == 1 && erased.quarantinedFiles == 2, "\(erased)")
        #expect(try harness.readBack().events.filter { $0.name == "Gone" }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: setAside))
        #expect(!FileManager.default.fileExists(atPath: rejected + "/" + refused))
        #expect(!FileManager.default.fileExists(atPath: harness.directory.path + "/" + StorageLayout.corruptTrackerStateName))
        #expect(await a.shutdown(timeout: testBound))
    }

    /// A stored record numbered past any real count (a log written by something else) is not taken as the floor of
    /// the next lease: the state file would hold a count it refuses, and every process would replace it, identity
    /// and consent with it.
    @Test func aRecordNumberedPastAnyRealCountLeavesTheStateReadable() async throws {
        let first = try Harness()
        first.tracker.login("kept")
        await first.tracker.shutdown(timeout: testBound)
        let damaged = InMemoryEventStore()
        damaged.append([Event(name: "Odd", time: testEpoch, sequence: .max, distinctID: "x", anonymousID: "x",
                              lib: LibInfo(lib: "x", libVersion: "1", method: .code))])
        let restarted = try first.restarted(store: damaged)
        restarted.tracker.track("E")
        let event = try #require(await restarted.flushedEvents(named: "E").first)
        #expect(event.sequence < PersistentStateFile.maxRecordedSequence)
        await restarted.tracker.shutdown(timeout: testBound)
        let state = try #require(PersistentStateFile(directory: first.directory.url).read(), "the state file became unreadable")
        #expect(state.loginID == "kept" && state.anonymousID == first.tracker.anonymousID)
    }

    @Test func twoTrackersStartingOnAFreshDirectoryAgreeOnOneIdentity() async throws {
        let directory = TemporaryDirectory()
        let ids = await onThreadsOfTheirOwn(4) { _ in
            try? Harness(directory: directory).tracker.anonymousID
        }
        #expect(ids.allSatisfy { $0 != nil })
        #expect(Set(ids.compactMap { $0 }).count == 1)
    }

    @Test func eventsOfTwoTrackersNeverShareASequenceNumber() async throws {
        let (a, b) = try pair()
        // More than the first blocks, in both at once, so each leases several.
        let count = Int(SequenceLeases.firstBlock) * 5
        _ = await onThreadsOfTheirOwn(2) { index in
            let tracker = index == 0 ? a.tracker : b.tracker
            for n in 0..<count { tracker.track("E", properties: ["n": .int(Int64(n))]) }
        }
        let first = await a.flushedEvents(), second = await b.flushedEvents()
        #expect(first.count == count && second.count == count)
        #expect(Set(first.map(\.anonymousID) + second.map(\.anonymousID)).count == 1)
        let numbers = first.map(\.sequence) + second.map(\.sequence)
        #expect(Set(numbers).count == 2 * count, "a sequence number given twice")
        // Each tracker's own numbers increase in the order it accepted its events.
        for events in [first, second] { #expect(events.map(\.sequence) == events.map(\.sequence).sorted()) }
        let file = try #require(PersistentStateFile(directory: a.directory.url).read())
        #expect(file.nextSequence > numbers.max()!)
    }

    @Test func aRestartAfterACleanEndNumbersOnWithoutAGap() async throws {
        let harness = try Harness()
        for _ in 0..<3 { harness.tracker.track("E") }
        await harness.tracker.shutdown(timeout: testBound)
        let restarted = try harness.restarted()
        restarted.tracker.track("E")
        #expect(await restarted.flushedEvents().map(\.sequence) == [4])
    }

    /// A state lock file that is not what Spoor writes (empty, short, garbage, a directory in its place) never
    /// stops tracking: the tracker starts, its changes are saved, its events recorded.
    @Test(arguments: ["", "xy", String(repeating: "\u{FF}", count: 64), "directory"])
    func aDamagedStateLockIsNoObstacle(_ content: String) async throws {
        let directory = TemporaryDirectory()
        let lock = directory.url.appendingPathComponent(StorageLayout.trackerStateLockName)
        if content == "directory" {
            try FileManager.default.createDirectory(at: lock, withIntermediateDirectories: false)
        } else {
            try Data(content.utf8).write(to: lock)
        }
        let harness = try Harness(directory: directory)
        harness.tracker.login("someone")
        for _ in 0..<3 { harness.tracker.track("E") }
        let events = await harness.flushedEvents(named: "E")
        #expect(events.count == 3 && events.allSatisfy { $0.loginID == "someone" })
        #expect(PersistentStateFile(directory: directory.url).read()?.loginID == "someone")
        // Restarted (with a store of its own, which remembers nothing): its numbers follow the first run's.
        await harness.tracker.shutdown(timeout: testBound)
        let restarted = try harness.restarted()
        restarted.tracker.track("E")
        let after = await restarted.flushedEvents(named: "E")
        #expect(after.count == 1 && after[0].sequence > events.map(\.sequence).max()!, "\(after.map(\.sequence))")
        #expect(restarted.tracker.loginID == "someone")
    }
}

@Suite struct SharedChangeTests {
    /// A change made again (a released tracker's successor replays what the released one had not saved, which its
    /// writer may have saved after all) changes nothing the second time: an erasure is counted once.
    @Test func anErasureMadeAgainIsCountedOnce() {
        let state = PersistedState.fresh(day: "2026-11-26")
        var identity = TrackerIdentity(state)
        let change = SharedChange.intent(.deleteStoredData(count: identity.deletions + 1))
        identity.replay(change)
        identity.replay(change)
        #expect(identity.deletions == 1)
        var other = TrackerIdentity(state)
        _ = other.apply(.deleteStoredData(count: 3))
        other.replay(change)
        #expect(other.deletions == 3)
    }
}

@Suite struct SequenceLeasesTests {
    @Test func numbersComeFromTheLeasedBlocksInOrder() {
        var leases = SequenceLeases(firstBlock: 2)
        #expect(leases.number(local: 1) == nil)
        #expect(leases.nextLeaseSize == 2)
        leases.add(10..<12)
        #expect(leases.number(local: 1) == 10)
        #expect(leases.number(local: 2) == 11)
        #expect(leases.number(local: 3) == nil)
        #expect(leases.nextLeaseSize == 4)
        leases.add(20..<24)
        #expect(leases.number(local: 3) == 20)
        #expect(leases.frontier == 24)
        #expect(leases.unused == 21..<24)
    }

    @Test func aDroppedEventsGapIsKeptAcrossABlocksEnd() {
        var leases = SequenceLeases(firstBlock: 4)
        _ = leases.number(local: 1)
        leases.add(0..<4)
        #expect(leases.number(local: 1) == 0)
        // Locals 2…6 were dropped: three numbers of this block and two of the next stay unused.
        #expect(leases.number(local: 7) == nil)
        #expect(leases.nextLeaseSize == 8 + 2)
        leases.add(4..<14)
        #expect(leases.number(local: 7) == 6)
        #expect(leases.number(local: 8) == 7)
    }

    @Test func withoutALeaseNumbersStillIncrease() {
        var leases = SequenceLeases(firstBlock: 2)
        _ = leases.number(local: 1)
        leases.add(5..<7)
        _ = leases.number(local: 1)
        _ = leases.number(local: 2)
        #expect(leases.number(local: 3) == nil)
        leases.continueUnleased(from: 0)
        #expect(leases.number(local: 3) == 7)
        #expect(leases.frontier > 7)
        // From what the files say was leased, when that is further.
        #expect(leases.number(local: 4) == 8)
        leases.continueUnleased(from: 100)
        #expect(leases.number(local: 5) == 100)
        // A stretch without a lease is short, and never handed back at the end.
        #expect(leases.unused.isEmpty)
        #expect(leases.frontier == 100 + SequenceLeases.unleasedStretch)
    }
}
