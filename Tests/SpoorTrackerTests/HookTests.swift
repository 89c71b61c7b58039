import Foundation
import SpoorModel
import SpoorLog
import SpoorTestSupport
import Testing
import SpoorSystem

import SpoorTracker

/// What a hook saw, collected from the writer thread.
private final class Seen: Sendable {
    let events = Locked<[HookEvent]>([])
    let threads = Locked<Set<String>>([])
}

private struct HookFailure: Error {}

@Suite("the beforeRecord hook")
struct HookTests {
    @Test func theHookSeesMergedPropertiesAndItsChangesAreRecorded() async throws {
        let seen = Seen()
        let h = try Harness { configuration in
            configuration.tracking.beforeRecord = { event in
                seen.events.withLock { $0.append(event) }
                seen.threads.withLock { _ = $0.insert(Thread.current.name ?? "") }
                event.properties["enriched"] = true
                event.properties["secret"] = nil
                event.properties["$device_id"] = "forged"
                return .record
            }
        }
        h.tracker.registerSuperProperties(["plan": "pro"])
        h.tracker.track("Buy", properties: ["secret": "x", "price": 3.5])
        let events = await h.flushedEvents()
        let before = try #require(seen.events.withLock { $0.first })
        #expect(before.name == "Buy")
        #expect(before.properties["plan"] == "pro")
        #expect(before.properties["$os"] == "TestOS")
        #expect(before.properties["secret"] == "x")
        #expect(before.properties["$is_first_day"] == true)
        let stored = try #require(events.first)
        #expect(stored.properties["enriched"] == true)
        #expect(stored.properties["secret"] == nil)
        #expect(stored.properties["price"] == .double(3.5))
        #expect(stored.properties["$device_id"] != "forged")
        // Off the caller's thread: on the writer.
        #expect(seen.threads.withLock { $0 } == ["spoor.writer"])
    }

    @Test func aDroppedEventIsNotRecordedAndIsCounted() async throws {
        let h = try Harness { $0.tracking.beforeRecord = { $0.name == "Noise" ? .drop : .record } }
        h.tracker.track("Noise")
        h.tracker.track("Signal")
        #expect(await h.flushedEvents().map(\.name) == ["Signal"])
        #expect(h.tracker.counters.droppedByHook == 1)
        #expect(h.tracker.counters.accepted == 2)
    }

    @Test func aHookThatThrowsOrBreaksTheRulesGetsTheEventRejected() async throws {
        let reported = Locked<[EventRejection]>([])
        let h = try Harness { configuration in
            configuration.tracking.beforeRecord = { event in
                switch event.name {
                case "Throws": throw HookFailure()
                case "Invalid": event.properties["bad key"] = 1
                case "NotANumber": event.properties["score"] = .double(.nan)
                default: break
                }
                return .record
            }
            configuration.tracking.onRejection = { error in reported.withLock { $0.append(error) } }
        }
        for name in ["Throws", "Invalid", "NotANumber", "Fine"] { h.tracker.track(name) }
        #expect(await h.flushedEvents().map(\.name) == ["Fine"])
        #expect(h.tracker.counters.rejected == [.hookThrew: 1, .hookInvalid: 2])
        #expect(reported.withLock { $0 }.map(\.key) == [nil, "bad key", "score"])
        #expect(h.logs.all.contains { $0.metadata["rule"] == "hook_invalid" && $0.metadata["detail"] == "invalid_property_key" })
    }

    @Test func autoTrackedEventsGoThroughTheHookAndProfilesDoNot() async throws {
        let seen = Seen()
        let h = try Harness { configuration in
            configuration.autoTrack.events = .all
            configuration.tracking.beforeRecord = { event in
                seen.events.withLock { $0.append(event) }
                return .record
            }
        }
        h.tracker.handle(.didBecomeActive)
        h.tracker.login("u1")
        h.tracker.profileSet(["city": "Hangzhou"])
        _ = await h.flushedEvents()
        let events = seen.events.withLock { $0 }
        #expect(events.map(\.name) == ["$AppStart", "$SignUp"])
        #expect(events.first?.isAutoTracked == true)
        #expect(events.last?.type == .trackSignup)
    }
}
