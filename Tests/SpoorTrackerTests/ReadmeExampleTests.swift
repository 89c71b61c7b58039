// The examples use only what the README shows an app importing (and the test doubles); SpoorLog and SpoorWire read
// the log back.
import Foundation
import SpoorLog
import SpoorTesting
import SpoorTestSupport
import SpoorTracker
import SpoorWire
import Testing

/// The README's example, kept compiling and true.
@Suite struct ReadmeExampleTests {
    struct Search: TrackedEvent {
        static let eventName = "Search"
        var keyword: String
        var properties: Properties { ["keyword": .string(keyword)] }
    }

    @Test func readmeExampleRecordsItsEvents() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Configuration(storageDirectory: directory)
        configuration.autoTrack.events = .all
        configuration.tracking.enableSession = true
        let clock = ManualClock(wall: 1_767_225_600_000)
        configuration.clock = clock
        configuration.autoTrack.heartbeatInterval = nil
        let tracker = try Tracker(configuration: configuration)

        tracker.track("BuyProduct", properties: ["product": "green tea", "quantity": 3, "price": 12.5, "gift": false])
        tracker.track(Search(keyword: "oolong"))
        tracker.registerSuperProperties(["plan": "pro"])
        tracker.login("user-1024")
        let timer = tracker.timerStart("WatchVideo")
        tracker.timerEnd(timer, properties: ["video": "intro"])
        tracker.profileSet(["city": "Hangzhou"])
        #expect(tracker.track("bad name") == false)
        // The README's `shutdown()` waits 5 s at most; a loaded test machine gets minutes.
        #expect(await tracker.shutdown(timeout: .seconds(300)))

        #expect(tracker.counters.accepted == 5)
        #expect(tracker.counters.rejectedTotal == 1)

        let events = try StoredLogs.events(in: directory)
        #expect(events.map(\.name) == ["BuyProduct", "Search", "$SignUp", "WatchVideo", ""])
        #expect(events.last?.type == .profileSet)
        #expect(events[3].properties["plan"] == "pro")
        #expect(events[3].distinctID == "user-1024")
    }

    /// The README's "Linux programs" example, in process (the real-process version, with the source's signal and
    /// exit handling, is `LifecycleProcessTests.readmeLinuxExampleLeavesPairedSessions`): ending `main` with
    /// `shutdown()` leaves a paired session, twice over.
    @Test func readmeLinuxExampleEndsWithAPairedSession() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for _ in 0..<2 {
            var configuration = Configuration(storageDirectory: directory)
            configuration.autoTrack.events = .all
            let tracker = try Tracker(configuration: configuration)
            tracker.attach(ProcessLifecycleSource(handlesSignals: false, handlesExit: false), recordsCrashes: false)
            tracker.track("JobDone", properties: ["items": 42])
            #expect(await tracker.shutdown(timeout: .seconds(300)))
        }
        // The second run adopted the first's log (its maker closed it) and sealed its records into batches.
        let names = try StoredLogs.events(in: directory).map(\.name)
        #expect(names == ["$AppStart", "JobDone", "$AppEnd", "$AppStart", "JobDone", "$AppEnd"])
    }
}
