import Foundation
import SpoorModel
import Testing

import SpoorTracker
import SpoorTestSupport

@Suite struct SessionTests {
    @Test func sessionsAreOffByDefault() async throws {
        let harness = try Harness()
        harness.tracker.track("E")
        let event = try #require(await harness.flushedEvents(named: "E").first)
        #expect(event.sessionID == nil)
    }

    @Test func aSessionEndsAfter30MinutesWithoutEvents() async throws {
        let harness = try Harness { $0.tracking.enableSession = true }
        harness.tracker.track("A")
        harness.clock.advance(by: .seconds(29 * 60 + 59))
        harness.tracker.track("B")
        harness.clock.advance(by: .seconds(30 * 60))
        harness.tracker.track("C")
        let ids = await harness.flushedEvents().map(\.sessionID)
        #expect(ids[0] != nil)
        #expect(ids[0] == ids[1])
        #expect(ids[2] != ids[1])
        #expect(ids[2] != nil)
    }

    @Test func aSessionEndsAfter12HoursWhateverHappens() async throws {
        let harness = try Harness { $0.tracking.enableSession = true }
        harness.tracker.track("First")
        for _ in 0..<(12 * 6 - 1) {
            harness.clock.advance(by: .seconds(600))
            harness.tracker.track("Busy")
        }
        harness.clock.advance(by: .seconds(599))
        harness.tracker.track("JustBefore")
        harness.clock.advance(by: .seconds(1))
        harness.tracker.track("Twelve")
        let events = await harness.flushedEvents()
        #expect(Set(events.dropLast().map(\.sessionID)).count == 1)
        #expect(events.last?.sessionID != events.first?.sessionID)
    }

    @Test func everyColdStartStartsANewSession() async throws {
        let harness = try Harness { $0.tracking.enableSession = true }
        harness.tracker.track("A")
        let first = await harness.flushedEvents().first?.sessionID
        await harness.tracker.shutdown(timeout: testBound)
        let restarted = try harness.restarted { $0.tracking.enableSession = true }
        restarted.tracker.track("B")
        let second = await restarted.flushedEvents().first?.sessionID
        #expect(first != nil && second != nil && first != second)
        // The lifecycle code can also start one on demand.
        restarted.tracker.startNewSession()
        restarted.tracker.track("C")
        let third = await restarted.flushedEvents().last?.sessionID
        #expect(third != second)
    }

    @Test func profileRecordsCarryNoSession() async throws {
        let harness = try Harness { $0.tracking.enableSession = true }
        harness.tracker.profileSet(["name": "Ann"])
        harness.tracker.track("E")
        // The profile record was stored and has no session, while an event tracked right after it has one.
        let events = await harness.flushedEvents()
        try #require(events.map(\.type) == [.profileSet, .track])
        #expect(events[0].sessionID == nil)
        #expect(events[1].sessionID != nil)
    }
}
