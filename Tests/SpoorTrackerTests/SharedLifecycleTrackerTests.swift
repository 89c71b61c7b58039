import Foundation
import SpoorModel
import SpoorLog
import SpoorSystem
import SpoorTesting
import SpoorTestSupport
import Testing

import SpoorTracker

/// Several trackers auto-tracking their lifecycle over one storage directory: each keeps its checkpoint and crash
/// marker in its own log, and whoever adopts the log of one that is gone turns them into its `$AppEnd` and
/// `AppCrashed` (docs/lifecycle.md, "Crash and kill recovery"; docs/event-log.md, "Several processes").
///
/// A process killed with `kill -9` leaves its files as they were; a copy of the storage directory taken while its
/// trackers run is exactly that, and in the copy their logs are not open in this process, so they count as gone.
@Suite("Lifecycle of several processes in one storage directory")
struct SharedLifecycleTrackerTests {
    let clock = ManualClock(wall: testEpoch)

    func tracker(_ storage: URL) throws -> Tracker {
        var configuration = Configuration(storageDirectory: storage)
        configuration.clock = clock
        configuration.autoTrack.heartbeatInterval = nil
        configuration.autoTrack.events = .all
        configuration.tracking.enableSession = true
        configuration.tracking.timeZone = TimeZone(identifier: "UTC")!
        configuration.tracking.presetOverrides = testPresets
        let tracker = try Tracker(configuration: configuration)
        tracker.attach(ManualLifecycleSource(), recordsCrashes: false)
        return tracker
    }

    /// What `kill -9` of every process tracking into `storage` would leave: a copy of it, once each tracker's writer
    /// has stored what it was given.
    func killed(_ storage: TemporaryDirectory, _ trackers: Tracker...) async throws -> TemporaryDirectory {
        for tracker in trackers {
            if !(await tracker.stored()) { Issue.record("a tracker's writer did not store its events within the bound") }
        }
        let copy = TemporaryDirectory()
        try FileManager.default.removeItem(at: copy.url)
        try FileManager.default.copyItem(at: storage.url, to: copy.url)
        return copy
    }

    func shutDown(_ trackers: Tracker...) async {
        for tracker in trackers {
            if !(await tracker.shutdown(timeout: testBound)) { Issue.record("shutdown() did not finish within \(testBound)") }
        }
    }

    func isRecovered(_ event: Event) -> Bool { event.properties["$app_end_reason"] == .string("recovered") }

    @Test("A second tracker's open leaves the running one's session alone: each session ends once, with its duration")
    func aSecondOpenLeavesTheRunningSessionAlone() async throws {
        let storage = TemporaryDirectory()
        let first = try tracker(storage.url)
        first.handle(.didBecomeActive)
        clock.advance(by: .seconds(10))
        let second = try tracker(storage.url)
        second.handle(.didBecomeActive)
        clock.advance(by: .seconds(5))
        await shutDown(first, second)

        let events = try StoredLogs.events(in: storage.url)
        let ends = events.filter { $0.name == "$AppEnd" }
        #expect(ends.count == 2, "\(ends.map(\.properties))")
        #expect(!ends.contains(where: isRecovered), "a running tracker's session was taken for a gone one's")
        #expect(Set(ends.compactMap { $0.properties["event_duration"] }) == [.double(15), .double(5)])
    }

    @Test("A crash recorded before another tracker opens is still there: one AppCrashed, then the session's end")
    func anotherOpenKeepsTheCrashMarker() async throws {
        let storage = TemporaryDirectory()
        let crashing = try tracker(storage.url)
        crashing.handle(.didBecomeActive)
        clock.advance(by: .seconds(8))
        crashing.recordCrash(reason: "SIGSEGV")
        let other = try tracker(storage.url)
        let copy = try await killed(storage, crashing, other)
        await shutDown(crashing, other)

        let next = try tracker(copy.url)
        await shutDown(next)
        let events = try StoredLogs.events(in: copy.url)
        let crashes = events.filter { $0.name == "AppCrashed" }
        #expect(crashes.count == 1)
        #expect(crashes.first?.properties["app_crashed_reason"] == .string("SIGSEGV"))
        #expect(crashes.first?.time == testEpoch + 8_000)
        let recovered = events.filter { $0.name == "$AppEnd" && isRecovered($0) }
        #expect(recovered.count == 1)
        #expect(recovered.first?.properties["event_duration"] == .double(8))
        #expect(recovered.first?.time == testEpoch + 8_000)
        // The crashed process's events: its session, the crash before the end.
        let start = events.first { $0.name == "$AppStart" && $0.sessionID == recovered.first?.sessionID }
        #expect(start != nil)
        let order = events.filter { $0.sessionID == start?.sessionID }.map(\.name)
        #expect(order == ["$AppStart", "AppCrashed", "$AppEnd"])
    }

    @Test("Two trackers killed while started: the next open ends each one's session once, timed to its last sign of life; a running tracker's session is left alone")
    func killedTrackersSessionsEndOnceEach() async throws {
        let storage = TemporaryDirectory()
        let a = try tracker(storage.url)
        a.handle(.didBecomeActive)
        clock.advance(by: .seconds(10))
        let b = try tracker(storage.url)
        b.handle(.didBecomeActive)
        b.pageAppear("p", page: PageInfo(screenName: "Product"))
        clock.advance(by: .seconds(20))
        a.noteAlive()  // a last alive at 30 s, 30 s into its session
        clock.advance(by: .seconds(5))
        b.noteAlive()  // b last alive at 35 s, 25 s into its session
        let copy = try await killed(storage, a, b)
        await shutDown(a, b)

        clock.advance(by: .seconds(100))
        let running = try tracker(copy.url)
        running.handle(.didBecomeActive)
        clock.advance(by: .seconds(7))
        let another = try tracker(copy.url)
        await shutDown(another, running)

        let events = try StoredLogs.events(in: copy.url)
        let ends = events.filter { $0.name == "$AppEnd" }
        let recovered = ends.filter(isRecovered)
        #expect(ends.count == 3, "\(ends.map(\.properties))")
        #expect(recovered.count == 2)
        #expect(Set(recovered.map(\.time)) == [testEpoch + 30_000, testEpoch + 35_000])
        for end in recovered {
            // Each over its own process's context: the session its `$AppStart` opened.
            let start = try #require(events.first { $0.name == "$AppStart" && $0.sessionID == end.sessionID })
            #expect(end.properties["event_duration"] == .double(Double(end.time - start.time) / 1000))
            #expect(end.lib.method == .autoTrack)
        }
        let leaves = events.filter { $0.name == "$AppPageLeave" }
        #expect(leaves.count == 1)
        #expect(leaves.first?.time == testEpoch + 35_000)
        #expect(leaves.first?.properties["event_duration"] == .double(25))
        let own = ends.filter { !isRecovered($0) }
        #expect(own.first?.properties["event_duration"] == .double(7))
        // Nothing is left to recover: a later open adds no event.
        let later = try tracker(copy.url)
        await shutDown(later)
        #expect(try StoredLogs.events(in: copy.url).count == events.count)
    }

    @Test("A process whose tracker recorded nothing (opted out) leaves nothing to recover")
    func anOptedOutProcessLeavesNothing() async throws {
        let storage = TemporaryDirectory()
        let quiet = try tracker(storage.url)
        _ = await quiet.optOut()
        quiet.handle(.didBecomeActive)
        clock.advance(by: .seconds(3))
        quiet.noteAlive()
        let copy = try await killed(storage, quiet)
        await shutDown(quiet)
        let next = try tracker(copy.url)
        await shutDown(next)
        #expect(try StoredLogs.events(in: copy.url).isEmpty)
    }

    @Test("An older Spoor's checkpoint and crash marker in the storage directory are read once, as the previous run's, then removed")
    func anOlderSporsFilesAreReadOnceAndRemoved() async throws {
        let storage = TemporaryDirectory()
        do {
            // A tracker whose store is not a log keeps its files where an older Spoor did: in the storage directory.
            var configuration = Configuration(storageDirectory: storage.url)
            configuration.clock = clock
            configuration.autoTrack.heartbeatInterval = nil
            configuration.autoTrack.events = .all
            let older = try Tracker(configuration: configuration, store: InMemoryEventStore())
            older.attach(ManualLifecycleSource(), recordsCrashes: false)
            older.handle(.didBecomeActive)
            clock.advance(by: .seconds(12))
            older.recordCrash(reason: "SIGABRT")
            _ = await older.stored()
        }
        for name in StorageLayout.lifecycleFileNames {
            #expect(FileManager.default.fileExists(atPath: storage.url.appendingPathComponent(name).path))
        }
        let first = try tracker(storage.url)
        await shutDown(first)
        for name in StorageLayout.lifecycleFileNames {
            #expect(!FileManager.default.fileExists(atPath: storage.url.appendingPathComponent(name).path), "\(name) left")
        }
        let second = try tracker(storage.url)
        await shutDown(second)
        let events = try StoredLogs.events(in: storage.url)
        #expect(events.map(\.name) == ["AppCrashed", "$AppEnd"])
        #expect(events.last?.properties["event_duration"] == .double(12))
        #expect(events.first?.properties["app_crashed_reason"] == .string("SIGABRT"))
    }
}
