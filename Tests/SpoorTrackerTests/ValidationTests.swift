import Foundation
import SpoorModel
import SpoorLog
import Testing
import SpoorSystem

import SpoorTracker

@Suite struct ValidationTests {
    @Test(arguments: [
        ("", ValidationRule.invalidEventName),
        ("1abc", .invalidEventName),
        ("has space", .invalidEventName),
        ("dash-ed", .invalidEventName),
        ("ünïcode", .invalidEventName),
        (String(repeating: "a", count: 101), .invalidEventName),
        ("event", .reservedEventName),
        ("EVENTS", .reservedEventName),
        ("Distinct_ID", .reservedEventName),
        ("user_group_x", .reservedEventName),
        ("USER_TAGS", .reservedEventName),
        ("datetime", .reservedEventName),
    ])
    func invalidEventNamesAreRejected(name: String, rule: ValidationRule) async throws {
        let harness = try Harness()
        #expect(harness.tracker.track(name, properties: ["ok": 1]) == false)
        #expect(await harness.flushedEvents().filter { $0.type == .track }.isEmpty)
        #expect(harness.tracker.counters.rejected[rule] == 1)
        #expect(harness.tracker.counters.accepted == 0)
    }

    @Test(arguments: ["a", "_x", "$AppStart", "A_b$9", String(repeating: "z", count: 100), "eventual", "timer", "ids", "user"])
    func validEventNamesAreAccepted(name: String) async throws {
        let harness = try Harness()
        #expect(harness.tracker.track(name))
        #expect(await harness.flushedEvents(named: name).count == 1)
    }

    @Test(arguments: [
        ("bad key", ValidationRule.invalidPropertyKey),
        ("9lives", .invalidPropertyKey),
        ("", .invalidPropertyKey),
        (String(repeating: "k", count: 101), .invalidPropertyKey),
        ("time", .reservedPropertyKey),
        ("Original_Id", .reservedPropertyKey),
        ("properties", .reservedPropertyKey),
        ("id", .reservedPropertyKey),
        ("first_id", .reservedPropertyKey),
        ("second_id", .reservedPropertyKey),
        ("users", .reservedPropertyKey),
        ("user_id", .reservedPropertyKey),
        ("date", .reservedPropertyKey),
        ("user_group", .reservedPropertyKey),
        ("user_tag42", .reservedPropertyKey),
    ])
    func invalidKeysRejectTheWholeEvent(key: String, rule: ValidationRule) async throws {
        let reported = Locked<[EventRejection]>([])
        let tracker = try Harness { configuration in
            configuration.tracking.onRejection = { error in reported.withLock { $0.append(error) } }
        }
        #expect(tracker.tracker.track("Buy", properties: ["good": "yes", key: 1]) == false)
        #expect(await tracker.flushedEvents(named: "Buy").isEmpty)
        #expect(reported.withLock { $0 } == [EventRejection(event: "Buy", key: key, rule: rule)])
        let warning = try #require(tracker.logs.all.first { $0.level == .warning })
        #expect(warning.metadata["event"] == "Buy")
        #expect(warning.metadata["key"] == key)
        #expect(warning.metadata["rule"] == rule.rawValue)
    }

    @Test func nonFiniteDoublesAreRejected() async throws {
        let harness = try Harness()
        #expect(harness.tracker.track("A", properties: ["x": .double(.nan)]) == false)
        #expect(harness.tracker.track("A", properties: ["x": .double(.infinity)]) == false)
        #expect(harness.tracker.track("A", properties: ["x": .double(-.infinity)]) == false)
        #expect(harness.tracker.track("A", properties: ["x": .double(.greatestFiniteMagnitude)]))
        #expect(harness.tracker.counters.rejected == [.nonFiniteNumber: 3])
        #expect(await harness.flushedEvents(named: "A").count == 1)
    }

    @Test func listsHoldAtMost500Strings() async throws {
        let harness = try Harness()
        let full = (0..<500).map(String.init)
        #expect(harness.tracker.track("L", properties: ["tags": .list(full)]))
        #expect(harness.tracker.track("L", properties: ["tags": .list(full + ["one more"])]) == false)
        #expect(harness.tracker.counters.rejected == [.listTooLong: 1])
        let events = await harness.flushedEvents(named: "L")
        #expect(events.count == 1)
        #expect(events.first?.properties["tags"] == .list(full))
    }

    @Test func longStringsAreCutAtACharacterBoundaryWithADollar() async throws {
        let harness = try Harness()
        let exact = String(repeating: "a", count: 8192)
        // "é" is 2 bytes: 4097 of them are 8194 bytes; the cut keeps 4095 (8190 bytes) + "$".
        let accented = String(repeating: "é", count: 4097)
        let emoji = String(repeating: "👍🏽", count: 2000)  // 8 bytes per character
        #expect(harness.tracker.track("S", properties: ["exact": .string(exact), "accented": .string(accented),
                                                         "emoji": .string(emoji), "list": .list(["short", accented])]))
        let event = try #require(await harness.flushedEvents(named: "S").first)
        #expect(event.properties["exact"] == .string(exact))
        guard case .string(let cut) = event.properties["accented"], case .string(let cutEmoji) = event.properties["emoji"],
            case .list(let list) = event.properties["list"]
        else {
            Issue.record("wrong types")
            return
        }
        #expect(cut == String(repeating: "é", count: 4095) + "$")
        #expect(cut.utf8.count <= 8192)
        #expect(cutEmoji == String(repeating: "👍🏽", count: 1023) + "$")
        #expect(list == ["short", cut])
    }

    @Test func stringsWithNULAreRejected() async throws {
        let harness = try Harness()
        #expect(harness.tracker.track("N", properties: ["s": "a\u{0}b"]) == false)
        #expect(harness.tracker.track("N", properties: ["l": ["ok", "\u{0}"]]) == false)
        #expect(harness.tracker.login("user\u{0}") == false)
        #expect(harness.tracker.counters.rejected == [.nulCharacter: 2, .invalidIdentity: 1])
        #expect(await harness.flushedEvents().isEmpty)
    }

    @Test func rejectedEventsLeaveOthersUntouched() async throws {
        let harness = try Harness()
        #expect(harness.tracker.track("Before", properties: ["n": 1]))
        #expect(harness.tracker.track("Bad", properties: ["n": 1, "time": 2]) == false)
        #expect(harness.tracker.track("After", properties: ["n": 2]))
        let events = await harness.flushedEvents()
        #expect(events.map(\.name) == ["Before", "After"])
        #expect(events.map(\.sequence) == [events[0].sequence, events[0].sequence + 1])
        let counters = harness.tracker.counters
        #expect(counters.accepted == 2)
        #expect(counters.rejectedTotal == 1)
    }

    @Test func invalidSuperPropertiesAreRejectedWhole() async throws {
        let harness = try Harness()
        #expect(harness.tracker.registerSuperProperties(["fine": 1, "events": 2]) == false)
        #expect(harness.tracker.superProperties.isEmpty)
        #expect(harness.tracker.counters.rejected == [.reservedPropertyKey: 1])
    }

    @Test func invalidDynamicSuperPropertiesRejectTheEvent() async throws {
        let harness = try Harness()
        harness.tracker.registerDynamicSuperProperties { ["x": .double(.nan)] }
        #expect(harness.tracker.track("D") == false)
        #expect(harness.tracker.counters.rejected == [.nonFiniteNumber: 1])
    }
}
