import Foundation
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorSystem
import SpoorTestSupport
import Testing

@testable import SpoorTracker

@Suite("shutdown and release")
struct ShutdownTests {
    @Test func shutdownWhileStartedLeavesPagesThenEndsTheSession() async throws {
        let h = try Harness { $0.autoTrack = .all }
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
        let next = try h.restarted { $0.autoTrack = .all }
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
        // No shutdown: the first tracker is gone, so its log must be closed and the directory free. (A new tracker
        // waits for a released one's writer, so it is made on a thread of its own.)
        let second = try await onThreadOfItsOwn { try Tracker(configuration: configuration) }
        second.track("FromTheSecond")
        #expect(await second.shutdown(timeout: testBound))
        let log = try EventLog(directory: Tracker.logDirectory(in: directory.url))
        defer { log.close() }
        var names: [String] = []
        try log.forEachRecord { names += try EventDecoder().decodeBatch($0).map(\.name) }
        #expect(names == ["FromTheFirst", "FromTheSecond"])
    }
}
