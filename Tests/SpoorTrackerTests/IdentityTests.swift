import Foundation
import SpoorModel
import SpoorTesting
import Testing

import SpoorTracker
import SpoorTestSupport

@Suite struct IdentityTests {
    @Test func anonymousIDIsCreatedOnceAndPersisted() async throws {
        let harness = try Harness()
        let anonymous = harness.tracker.anonymousID
        #expect(!anonymous.isEmpty)
        #expect(harness.tracker.distinctID == anonymous)
        harness.tracker.track("E")
        let event = try #require(await harness.flushedEvents(named: "E").first)
        #expect(event.anonymousID == anonymous)
        #expect(event.distinctID == anonymous)
        #expect(event.loginID == nil)
        #expect(await harness.tracker.shutdown(timeout: testBound))
        let restarted = try harness.restarted()
        #expect(restarted.tracker.anonymousID == anonymous)
    }

    @Test func identifyAndResetReplaceTheAnonymousID() async throws {
        let harness = try Harness()
        let original = harness.tracker.anonymousID
        #expect(harness.tracker.identify("device-1"))
        harness.tracker.track("A")
        harness.tracker.resetAnonymousID()
        let fresh = harness.tracker.anonymousID
        #expect(fresh != original && fresh != "device-1")
        harness.tracker.track("B")
        #expect(harness.tracker.identify("") == false)
        #expect(harness.tracker.identify(String(repeating: "x", count: 256)) == false)
        #expect(harness.tracker.counters.rejected[.invalidIdentity] == 2)
        let events = await harness.flushedEvents()
        #expect(events.map(\.anonymousID) == ["device-1", fresh])
        await harness.tracker.shutdown(timeout: testBound)
        #expect(try harness.restarted().tracker.anonymousID == fresh)
    }

    @Test func loginEmitsSignUpOnceAndLogoutClears() async throws {
        let harness = try Harness()
        let anonymous = harness.tracker.anonymousID
        harness.tracker.track("Before")
        #expect(harness.tracker.login("user-1"))
        #expect(harness.tracker.login("user-1"))  // same id: no second $SignUp
        harness.tracker.track("During")
        harness.tracker.logout()
        harness.tracker.track("After")
        #expect(harness.tracker.login("") == false)
        let events = await harness.flushedEvents()
        #expect(events.map(\.name) == ["Before", "$SignUp", "During", "After"])
        let signUp = events[1]
        #expect(signUp.type == .trackSignup)
        #expect(signUp.originalID == anonymous)
        #expect(signUp.distinctID == "user-1")
        #expect(signUp.loginID == "user-1")
        #expect(events[2].distinctID == "user-1")
        #expect(events[2].anonymousID == anonymous)
        #expect(events[3].distinctID == anonymous)
        #expect(events[3].loginID == nil)
        #expect(harness.tracker.loginID == nil)
    }

    @Test func identityAndSuperPropertiesSurviveARestart() async throws {
        let harness = try Harness()
        harness.tracker.login("user-7")
        harness.tracker.registerSuperProperties(["plan": "pro", "seats": 3, "ratio": 0.5, "beta": true,
                                                  "since": .date(123), "tags": ["a", "b"]])
        let anonymous = harness.tracker.anonymousID
        #expect(await harness.tracker.shutdown(timeout: testBound))
        let restarted = try harness.restarted()
        #expect(restarted.tracker.loginID == "user-7")
        #expect(restarted.tracker.distinctID == "user-7")
        #expect(restarted.tracker.anonymousID == anonymous)
        #expect(restarted.tracker.superProperties == ["plan": "pro", "seats": 3, "ratio": 0.5, "beta": true,
                                                      "since": .date(123), "tags": ["a", "b"]])
        restarted.tracker.login("user-7")  // already logged in: no $SignUp after the restart either
        restarted.tracker.track("E")
        let events = await restarted.flushedEvents()
        #expect(events.map(\.name) == ["E"])
        #expect(events[0].properties["plan"] == "pro")
    }

    @Test(arguments: ["{not json", "", "{\"version\": 1}", "\u{0}\u{1}\u{2}"])
    func aCorruptStateFileIsReportedAndReplaced(contents: String) async throws {
        let directory = TemporaryDirectory()
        try Data(contents.utf8).write(to: directory.url.appendingPathComponent("state.json"))
        let harness = try Harness(directory: directory)
        #expect(harness.tracker.counters.corruptStateFiles == 1)
        #expect(harness.logs.all.contains { $0.level == .error && $0.message.contains("corrupt") })
        #expect(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("state.json.corrupt").path))
        #expect(harness.tracker.track("Works"))
        #expect(await harness.flushedEvents(named: "Works").count == 1)
        #expect(await harness.tracker.shutdown(timeout: testBound))
        // The replacement is a good file.
        let again = try harness.restarted()
        #expect(again.tracker.counters.corruptStateFiles == 0)
        #expect(again.tracker.anonymousID == harness.tracker.anonymousID)
    }

    @Test func firstLaunchIsReportedOncePerInstall() async throws {
        let harness = try Harness()
        // The lifecycle takes the flag when the tracker is created, for `$is_first_time`.
        #expect(harness.tracker.lifecycle.isFirstLaunch)
        #expect(harness.tracker.consumeFirstLaunch() == false)
        await harness.tracker.shutdown(timeout: testBound)
        #expect(try harness.restarted().tracker.lifecycle.isFirstLaunch == false)
        // A fresh install starts over.
        #expect(try Harness().tracker.lifecycle.isFirstLaunch)
    }
}

@Suite struct WriterWakeupTests {
    /// A login while the writer sleeps must wake it: a lost wake-up once left `flush` waiting forever.
    /// Each round lets the writer go idle, then changes identity and flushes with a bounded wait.
    @Test func identityChangesWakeAnIdleWriter() async throws {
        let harness = try Harness()
        for round in 0..<200 {
            try #require(await harness.tracker.stored(), "round \(round)")
            if round.isMultiple(of: 2) { harness.tracker.login("user-\(round)") } else { harness.tracker.logout() }
            try #require(await harness.tracker.stored(), "round \(round)")
            harness.tracker.registerSuperProperties(["round": .int(Int64(round))])
            try #require(await harness.tracker.stored(), "round \(round)")
        }
        #expect(harness.store.events.filter { $0.name == "$SignUp" }.count == 100)
    }
}
