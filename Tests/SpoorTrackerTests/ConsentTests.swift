import Foundation
import SpoorModel
import SpoorLog
import SpoorTestSupport
import Testing

import SpoorTracker

@Suite("consent")
struct ConsentTests {
    @Test func optingOutStopsRecordingAcrossRestartsUntilOptIn() async throws {
        let h = try Harness()
        #expect(!h.tracker.isOptedOut)
        #expect(h.tracker.track("Before"))
        await h.tracker.optOut()
        #expect(h.tracker.isOptedOut)
        #expect(!h.tracker.track("WhileOut"))
        #expect(!h.tracker.profileSet(["plan": "pro"]))
        #expect(await h.flushedEvents().map(\.name) == ["Before"])
        await h.tracker.shutdown(timeout: testBound)

        let again = try h.restarted()
        #expect(again.tracker.isOptedOut)
        #expect(!again.tracker.track("StillOut"))
        again.tracker.optIn()
        #expect(again.tracker.track("After"))
        #expect(await again.flushedEvents().map(\.name) == ["After"])
        await again.tracker.shutdown(timeout: testBound)
        #expect(try !again.restarted().tracker.isOptedOut)
    }

    @Test func appsThatAskFirstStartOptedOut() async throws {
        let h = try Harness { $0.tracking.startsOptedOut = true }
        #expect(h.tracker.isOptedOut)
        #expect(!h.tracker.track("BeforeConsent"))
        h.tracker.optIn()
        #expect(h.tracker.track("AfterConsent"))
        #expect(await h.flushedEvents().map(\.name) == ["AfterConsent"])
        await h.tracker.shutdown(timeout: testBound)
        // The decision persists: the configuration is not read again.
        #expect(try !h.restarted { $0.tracking.startsOptedOut = true }.tracker.isOptedOut)
    }

    @Test func aStateFileFromBeforeConsentLoadsOptedIn() async throws {
        let directory = TemporaryDirectory()
        let old = """
            {"anonymousID":"anon","deviceID":"dev","firstDay":"2023-11-14","firstLaunchPending":false,\
            "nextSequence":7,"superProperties":{},"version":1}
            """
        try Data(old.utf8).write(to: directory.url.appendingPathComponent("state.json"))
        let h = try Harness(directory: directory) { $0.tracking.startsOptedOut = true }
        #expect(!h.tracker.isOptedOut)
        #expect(h.tracker.anonymousID == "anon")
        #expect(h.tracker.track("Kept"))
        #expect(await h.flushedEvents().map(\.sequence) == [7])
    }

    @Test func identityIsRememberedWhileOptedOutButNoSignUpIsRecorded() async throws {
        let h = try Harness()
        await h.tracker.optOut()
        #expect(h.tracker.login("user-1"))
        #expect(h.tracker.registerSuperProperties(["plan": "pro"]))
        h.tracker.optIn()
        #expect(h.tracker.loginID == "user-1")
        h.tracker.track("Buy")
        let events = await h.flushedEvents()
        #expect(events.map(\.name) == ["Buy"])
        #expect(events.first?.distinctID == "user-1")
        #expect(events.first?.properties["plan"] == .string("pro"))
    }

    @Test func optingOutWithDeletionErasesTheLogAndTheOutboxDurably() async throws {
        let directory = TemporaryDirectory()
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.storage.durability = .always
        let tracker = try Tracker(configuration: configuration)
        for index in 0..<30 { tracker.track("E\(index)") }
        await tracker.flush()
        let log = try #require((tracker.pipeline.store as? EventLogStore)?.log)
        let sealed = try #require(try log.seal(maxRecords: 10, codec: .none))
        #expect(sealed.recordCount == 10)

        let erased = await tracker.optOut(deleteStoredData: true)
        #expect(erased.records == 20)
        #expect(erased.batches == 1)
        #expect(log.recordCount == 0)
        #expect(log.pendingBatches().isEmpty)
        await tracker.shutdown(timeout: testBound)

        // Nothing comes back when the log is opened again, and no file still holds the events' bytes.
        let reopened = try EventLog(directory: try StoredLogs.only(in: directory.url))
        #expect(reopened.recordCount == 0)
        #expect(reopened.pendingBatches().isEmpty)
        reopened.close()
        let logFiles = try FileManager.default.subpathsOfDirectory(atPath: Tracker.logDirectory(in: directory.url).path)
        for file in logFiles {
            var isDirectory: ObjCBool = false
            let path = Tracker.logDirectory(in: directory.url).appendingPathComponent(file).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: Tracker.logDirectory(in: directory.url).appendingPathComponent(file))
            #expect(bytes.range(of: Data("E1".utf8)) == nil, "\(file) still holds an erased event")
        }
    }

    @Test func autoTrackingEndsTheSessionAtOptOutAndStartsANewOneAtOptIn() async throws {
        let h = try Harness { $0.autoTrack.events = .all }
        h.tracker.handle(.didFinishLaunching(.inactive))
        h.tracker.handle(.didBecomeActive)
        h.tracker.pageAppear("home", page: PageInfo(screenName: "Home"))
        h.clock.advance(by: .seconds(2))
        await h.tracker.optOut()
        // Quiet while opted out: the lifecycle runs on, nothing is recorded.
        h.tracker.handle(.didEnterBackground)
        h.tracker.handle(.willEnterForeground)
        h.tracker.handle(.didBecomeActive)
        h.tracker.pageAppear("cart", page: PageInfo(screenName: "Cart"))
        h.tracker.trackClick(AppClick(elementType: "UIButton", elementPath: "Cart/UIButton"))
        h.clock.advance(by: .seconds(3))
        h.tracker.optIn()
        h.clock.advance(by: .seconds(1))
        h.tracker.handle(.didEnterBackground)
        let names = await h.flushedEvents().map(\.name)
        #expect(names == [
            "$AppStart", "$AppViewScreen", "$AppPageLeave", "$AppEnd",
            "$AppStart", "$AppViewScreen", "$AppViewScreen", "$AppPageLeave", "$AppPageLeave", "$AppEnd",
        ])
        let ends = await h.flushedEvents(named: "$AppEnd").map { $0.properties["event_duration"] }
        #expect(ends == [.double(2), .double(1)])
    }
}
