import Foundation
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorSystem
import SpoorTestSupport
import SpoorSystem
import Testing

import SpoorTracker

@Suite("shutdown and release")
struct ShutdownTests {
    @Test func shutdownWhileStartedLeavesPagesThenEndsTheSession() async throws {
        let h = try Harness { $0.autoTrack.events = .all }
        h.tracker.attach(ManualLifecycleSource(), recordsCrashes: false)
        h.tracker.handle(.didBecomeActive)
        h.tracker.pageAppear("a", page: PageInfo(screenName: "A"))
        h.tracker.pageAppear("b", page: PageInfo(screenName: "B"))
        h.clock.advance(by: .milliseconds(1500))
        #expect(await h.tracker.shutdown(timeout: testBound))
        #expect(h.store.events.map(\.name) == ["$AppStart", "$AppViewScreen", "$AppViewScreen", "$AppPageLeave", "$AppPageLeave", "$AppEnd"])
        #expect(h.store.events.last?.properties["event_duration"] == .double(1.5))
        // Signals after shutdown change nothing, and leave nothing for the next launch to recover.
        h.tracker.handle(.didEnterBackground)
        h.tracker.handle(.didBecomeActive)
        let next = try h.restarted { $0.autoTrack.events = .all }
        next.tracker.handle(.didBecomeActive)
        #expect(await next.flushedEvents().map(\.name) == ["$AppStart"])
    }

    @Test func aReleasedTrackerDoesNotKeepTheDirectoryLocked() async throws {
        let directory = TemporaryDirectory()
        let configuration = Configuration(storageDirectory: directory.url)
        do {
            let first = try Tracker(configuration: configuration)
            first.track("FromTheFirst")
        }
        // No shutdown: the first tracker is gone, so its log is closed (or handed to the next tracker) and the
        // directory free.
        let second = try Tracker(configuration: configuration)
        second.track("FromTheSecond")
        #expect(await second.shutdown(timeout: testBound))
        // Handed over (one log) or adopted (the first's records sealed into a batch): every event once, in order.
        let names = try StoredLogs.events(in: directory.url).map(\.name)
        #expect(names == ["FromTheFirst", "FromTheSecond"])
    }

    /// A released tracker's writer still busy with the directory's log (here held inside a `beforeRecord` hook):
    /// a new tracker over the directory neither waits for it nor fails; it takes the open log over, starts with
    /// the released tracker's identity, and its events follow the released one's, each written once.
    @Test func aNewTrackerDoesNotWaitForAReleasedOnesWriter() async throws {
        let directory = TemporaryDirectory()
        let gate = Promise<Void>()
        let writing = Promise<Void>()
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.tracking.beforeRecord = { _ in
            writing.fulfil(())
            _ = gate.wait(timeout: testBound)
            return .record
        }
        do {
            let first = try Tracker(configuration: configuration)
            first.login("user-1")
            first.track("FromTheFirst")
        }
        // The released writer is inside the hook, holding the log, until the gate opens.
        await writing.value
        let made = await finished {
            await onThreadOfItsOwn { () -> Result<Tracker, ConfigurationError> in
                Result { () throws(ConfigurationError) in try Tracker(configuration: Configuration(storageDirectory: directory.url)) }
            }
        }
        gate.fulfil(())
        guard case .success(let second)? = made else {
            Issue.record("the new tracker did not start while the released writer was busy: \(String(describing: made))")
            return
        }
        #expect(second.loginID == "user-1", "the released tracker's identity, not yet saved to state.json")
        second.track("FromTheSecond")
        #expect(await second.shutdown(timeout: testBound))
        let events = try StoredLogs.events(in: directory.url)
        #expect(events.map(\.name) == ["$SignUp", "FromTheFirst", "FromTheSecond"])
        #expect(events.map(\.sequence) == events.map(\.sequence).sorted())
        #expect(Set(events.map(\.sequence)).count == 3)
        #expect(events.last?.distinctID == "user-1")
    }
}
