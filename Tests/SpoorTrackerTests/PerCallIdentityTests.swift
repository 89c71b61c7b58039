import Foundation
import SpoorModel
import SpoorLog
import SpoorWire
import SpoorSystem
import SpoorTesting
import Testing

import SpoorTracker
import SpoorTestSupport

/// Events, profile operations and `$SignUp` for a user named on the call (a server's request's user): the record
/// carries the call's id; the tracker's identity, session and sequence go on as before (docs/events.md, "Identity").
@Suite struct PerCallIdentityTests {
    struct Who: TrackedEvent {
        static let eventName = "Checkout"
        var total: Double
        var properties: Properties { ["total": .double(total)] }
    }

    @Test func perCallEventsCarryTheCallsIDAndLeaveTheTrackersAlone() async throws {
        let harness = try Harness { $0.tracking.enableSession = true }
        let tracker = harness.tracker
        let anonymous = tracker.anonymousID
        tracker.registerSuperProperties(["service": "shop"])
        tracker.track("Mine")
        #expect(tracker.track("Purchase", distinctID: "user-42", properties: ["price": 3.5]))
        #expect(tracker.track(Who(total: 9), distinctID: "user-7"))
        tracker.track("MineAgain")
        #expect(tracker.distinctID == anonymous)
        #expect(tracker.loginID == nil)

        let events = await harness.flushedEvents()
        #expect(events.map(\.name) == ["Mine", "Purchase", "Checkout", "MineAgain"])
        #expect(events.map(\.distinctID) == [anonymous, "user-42", "user-7", anonymous])
        #expect(events.map(\.anonymousID) == Array(repeating: anonymous, count: 4))
        #expect(events.map(\.loginID) == [nil, nil, nil, nil])
        // Sequence numbers go on through them: one order for every event of the tracker.
        #expect(events.map(\.sequence) == [1, 2, 3, 4])
        // Presets and super properties are merged as for any event; the call site's properties too.
        #expect(events[1].properties["service"] == "shop")
        #expect(events[1].properties["$os"] == "TestOS")
        #expect(events[1].properties["price"] == 3.5)
        #expect(events[2].properties["total"] == 9.0)
        // The tracker's session is its own user's: per-call events take no part in it.
        #expect(events[0].sessionID != nil)
        #expect(events[0].sessionID == events[3].sessionID)
        #expect(events[1].sessionID == nil)
        #expect(events[2].sessionID == nil)
    }

    @Test func aLoggedInTrackersLoginIDIsNotLentToPerCallEvents() async throws {
        let harness = try Harness()
        let tracker = harness.tracker
        #expect(tracker.login("operator"))
        #expect(tracker.track("Purchase", distinctID: "user-42"))
        tracker.track("Mine")
        let events = await harness.flushedEvents()
        #expect(events.map(\.name) == ["$SignUp", "Purchase", "Mine"])
        #expect(events[1].distinctID == "user-42")
        #expect(events[1].loginID == nil)
        #expect(events[2].distinctID == "operator")
        #expect(events[2].loginID == "operator")
        #expect(tracker.distinctID == "operator")
    }

    /// Through the real log, where events extend a shared context record: the call's id must survive the
    /// context (which holds the tracker's ids) on the way out.
    @Test func perCallIDsSurviveTheLogsContextRecords() async throws {
        let directory = TemporaryDirectory()
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.clock = ManualClock(wall: testEpoch)
        configuration.autoTrack.heartbeatInterval = nil
        configuration.tracking.presetOverrides = testPresets
        let tracker = try Tracker(configuration: configuration)
        let anonymous = tracker.anonymousID
        tracker.track("Mine")
        tracker.track("Purchase", distinctID: "user-42")
        tracker.profileSet(["plan": "pro"], distinctID: "user-42")
        tracker.trackSignUp(loginID: "user-43", anonymousID: "cookie-9")
        tracker.track("MineAgain")
        #expect(await tracker.shutdown(timeout: testBound))

        let log = try EventLog(directory: Tracker.logDirectory(in: directory.url), configuration: .init())
        defer { log.close() }
        let decoder = EventDecoder()
        var events: [Event] = []
        try log.forEachRecord { payload in events += try decoder.decodeBatch(payload) }
        #expect(events.map(\.name) == ["Mine", "Purchase", "", "$SignUp", "MineAgain"])
        #expect(events.map(\.distinctID) == [anonymous, "user-42", "user-42", "user-43", anonymous])
        #expect(events.map(\.loginID) == [nil, nil, nil, "user-43", nil])
        #expect(events[3].originalID == "cookie-9")
        #expect(events[1].properties["$os"] == "TestOS")
    }

    @Test func profileOperationsForAGivenUser() async throws {
        let harness = try Harness()
        let tracker = harness.tracker
        #expect(tracker.profileSet(["name": "Ann"], distinctID: "user-1"))
        #expect(tracker.profileSetOnce(["first_seen": "today"], distinctID: "user-1"))
        #expect(tracker.profileIncrement(["visits": 1], distinctID: "user-1"))
        #expect(tracker.profileAppend(["tags": ["a"]], distinctID: "user-1"))
        #expect(tracker.profileUnset(["old"], distinctID: "user-1"))
        #expect(tracker.profileDelete(distinctID: "user-2"))
        #expect(tracker.profileSet(["name": "Me"]))
        let events = await harness.flushedEvents()
        #expect(events.map(\.type) == [
            .profileSet, .profileSetOnce, .profileIncrement, .profileAppend, .profileUnset, .profileDelete, .profileSet,
        ])
        #expect(events.map(\.distinctID) == ["user-1", "user-1", "user-1", "user-1", "user-1", "user-2", tracker.anonymousID])
        #expect(events[0].properties == ["name": "Ann"])
        #expect(events[2].properties == ["visits": 1])
    }

    @Test func signUpLinksTheGivenIDsEveryTimeAndChangesNothing() async throws {
        let harness = try Harness()
        let tracker = harness.tracker
        let anonymous = tracker.anonymousID
        #expect(tracker.trackSignUp(loginID: "user-42", anonymousID: "cookie-1"))
        #expect(tracker.trackSignUp(loginID: "user-42", anonymousID: "cookie-1"))  // a server remembers no login
        let events = await harness.flushedEvents()
        #expect(events.count == 2)
        for event in events {
            #expect(event.name == "$SignUp")
            #expect(event.type == .trackSignup)
            #expect(event.distinctID == "user-42")
            #expect(event.loginID == "user-42")
            #expect(event.originalID == "cookie-1")
            #expect(event.anonymousID == anonymous)
        }
        #expect(tracker.loginID == nil)
        #expect(tracker.distinctID == anonymous)
    }

    @Test func invalidIDsAreRejectedAndCounted() async throws {
        let rejections = Locked<[EventRejection]>([])
        let harness = try Harness { configuration in
            configuration.tracking.onRejection = { error in rejections.withLock { $0.append(error) } }
        }
        let tracker = harness.tracker
        #expect(tracker.track("Purchase", distinctID: "") == false)
        #expect(tracker.track("Purchase", distinctID: "   ") == false)
        #expect(tracker.track("Purchase", distinctID: String(repeating: "x", count: 256)) == false)
        #expect(tracker.track("Purchase", distinctID: "a\u{0}b") == false)
        #expect(tracker.track(Who(total: 1), distinctID: "") == false)
        #expect(tracker.profileSet(["a": 1], distinctID: "") == false)
        #expect(tracker.profileDelete(distinctID: " ") == false)
        #expect(tracker.trackSignUp(loginID: "", anonymousID: "cookie") == false)
        #expect(tracker.trackSignUp(loginID: "user", anonymousID: "") == false)
        // A valid id does not make an invalid event valid, and the rule is the event's own.
        #expect(tracker.track("bad name", distinctID: "user-1") == false)
        #expect(tracker.profileIncrement(["n": "text"], distinctID: "user-1") == false)
        // The longest valid id is accepted.
        #expect(tracker.track("Purchase", distinctID: String(repeating: "x", count: 255)))

        #expect(tracker.counters.rejected == [.invalidIdentity: 9, .invalidEventName: 1, .wrongValueType: 1])
        let seen = rejections.withLock { $0 }
        #expect(seen.count == 11)
        #expect(seen.first == EventRejection(event: "Purchase", key: "distinctID", rule: .invalidIdentity))
        #expect(seen.contains(EventRejection(event: "$SignUp", key: "anonymousID", rule: .invalidIdentity)))
        let events = await harness.flushedEvents()
        #expect(events.count == 1)
        #expect(events.first?.sequence == 1)  // rejected calls take no sequence number
        #expect(tracker.counters.accepted == 1)
    }

    @Test func theHookSeesTheCallsID() async throws {
        let seen = Locked<[String]>([])
        let harness = try Harness { configuration in
            configuration.tracking.beforeRecord = { event in
                seen.withLock { $0.append("\(event.distinctID) \(event.loginID ?? "-")") }
                return .record
            }
        }
        harness.tracker.track("Purchase", distinctID: "user-42")
        harness.tracker.track("Mine")
        let events = await harness.flushedEvents()
        #expect(events.map(\.distinctID) == ["user-42", harness.tracker.anonymousID])
        #expect(seen.withLock { $0 } == ["user-42 -", "\(harness.tracker.anonymousID) -"])
    }

    @Test func optedOutNoPerCallEventIsRecorded() async throws {
        let harness = try Harness()
        await harness.tracker.optOut()
        #expect(harness.tracker.track("Purchase", distinctID: "user-42") == false)
        #expect(harness.tracker.trackSignUp(loginID: "user-42", anonymousID: "cookie") == false)
        #expect(harness.tracker.profileSet(["a": 1], distinctID: "user-42") == false)
        #expect(await harness.flushedEvents().isEmpty)
    }

    /// Many tasks at once, each tracking for its own user while others track for theirs and the tracker's own
    /// identity changes underneath: every event carries the id of the call that made it. An identity taken from
    /// shared state (a login and logout around each call, say) would give some events another task's id.
    @Test func concurrentPerCallEventsEachCarryTheirOwnID() async throws {
        let harness = try Harness { $0.storage.maxBufferedEvents = 100_000 }
        let tracker = harness.tracker
        let users = 16
        let perUser = 500
        await withTaskGroup(of: Void.self) { group in
            for user in 0..<users {
                group.addTask {
                    for i in 0..<perUser {
                        tracker.track("Request", distinctID: "user-\(user)", properties: ["who": "user-\(user)", "i": .int(Int64(i))])
                        if i % 50 == 0 { tracker.profileIncrement(["requests": 50], distinctID: "user-\(user)") }
                    }
                }
            }
            group.addTask {
                for i in 0..<perUser {
                    if i % 2 == 0 { tracker.login("operator-\(i)") } else { tracker.logout() }
                    tracker.track("Own", properties: ["i": .int(Int64(i))])
                }
            }
        }
        let events = await harness.flushedEvents()
        let requests = events.filter { $0.name == "Request" }
        #expect(requests.count == users * perUser)
        let wrong = requests.filter { $0.properties["who"] != .string($0.distinctID) || $0.loginID != nil }
        #expect(wrong.count == 0, "events carry another call's id")
        // Each user's events keep their order, and sequence numbers are one increasing run over everything.
        for user in 0..<users {
            let order = requests.filter { $0.distinctID == "user-\(user)" }.compactMap { event -> Int64? in
                if case .int(let i) = event.properties["i"] { return i } else { return nil }
            }
            #expect(order == (0..<Int64(perUser)).map { $0 })
        }
        #expect(events.map(\.sequence) == events.map(\.sequence).sorted())
        #expect(Set(events.map(\.sequence)).count == events.count)
        let profiles = events.filter { $0.type == .profileIncrement }
        #expect(profiles.count == users * perUser / 50)
        #expect(profiles.allSatisfy { $0.distinctID.hasPrefix("user-") })
        // The tracker's own events carry the tracker's identity of their moment, never a per-call id.
        #expect(events.filter { $0.name == "Own" }.allSatisfy { !$0.distinctID.hasPrefix("user-") })
    }
}
