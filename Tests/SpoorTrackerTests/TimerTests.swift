import Foundation
import SpoorModel
import Testing

import SpoorTracker

@Suite struct TimerTests {
    @Test func timerEndRecordsTheDurationInSecondsWithThreeDecimals() async throws {
        let harness = try Harness()
        let id = harness.tracker.timerStart("Watch")
        harness.clock.advance(by: .milliseconds(1234) + .microseconds(567))
        #expect(harness.tracker.timerEnd(id, properties: ["video": "intro"]))
        let event = try #require(await harness.flushedEvents(named: "Watch").first)
        #expect(event.properties["event_duration"] == .double(1.235))
        #expect(event.properties["video"] == "intro")
        #expect(harness.tracker.timerEnd(id) == false)  // already ended
    }

    @Test func pausedTimeDoesNotCount() async throws {
        let harness = try Harness()
        let id = harness.tracker.timerStart("Read")
        harness.clock.advance(by: .seconds(2))
        #expect(harness.tracker.timerPause(id))
        harness.clock.advance(by: .seconds(100))
        #expect(harness.tracker.timerResume(id))
        harness.clock.advance(by: .seconds(3))
        harness.tracker.timerEnd(id)
        #expect(await harness.flushedEvents(named: "Read").first?.properties["event_duration"] == .double(5))
    }

    @Test func severalTimersWithTheSameNameRunAtOnce() async throws {
        let harness = try Harness()
        let first = harness.tracker.timerStart("Task")
        harness.clock.advance(by: .seconds(1))
        let second = harness.tracker.timerStart("Task")
        #expect(first != second)
        harness.clock.advance(by: .seconds(1))
        harness.tracker.timerEnd(second)
        harness.clock.advance(by: .seconds(1))
        harness.tracker.timerEnd(first)
        let durations = await harness.flushedEvents(named: "Task").map { $0.properties["event_duration"] }
        #expect(durations == [.double(1), .double(3)])
    }

    @Test func appBackgroundPausesTimersAndStartResumesThem() async throws {
        let harness = try Harness()
        let running = harness.tracker.timerStart("Running")
        let userPaused = harness.tracker.timerStart("UserPaused")
        harness.clock.advance(by: .seconds(1))
        harness.tracker.timerPause(userPaused)
        harness.tracker.pauseAllTimers()
        harness.clock.advance(by: .seconds(600))  // in the background
        harness.tracker.resumeAllTimers()
        harness.clock.advance(by: .seconds(2))
        harness.tracker.timerEnd(running)
        harness.tracker.timerEnd(userPaused)  // still paused by the user
        let events = await harness.flushedEvents()
        #expect(events.map(\.name) == ["Running", "UserPaused"])
        #expect(events.map { $0.properties["event_duration"] } == [.double(3), .double(1)])
    }

    @Test func durationsOf24HoursOrMoreReportZero() async throws {
        let harness = try Harness()
        let long = harness.tracker.timerStart("Long")
        let almost = harness.tracker.timerStart("Almost")
        harness.clock.advance(by: .seconds(24 * 3600 - 1))
        harness.tracker.timerEnd(almost)
        harness.clock.advance(by: .seconds(1))
        harness.tracker.timerEnd(long)
        let events = await harness.flushedEvents()
        #expect(events.map { $0.properties["event_duration"] } == [.double(86399), .double(0)])
        #expect(EventDuration.seconds(fromNanoseconds: 1_500_000) == 0.002)
    }

    @Test func removeAndClearDiscardTimers() async throws {
        let harness = try Harness()
        let a = harness.tracker.timerStart("A")
        let b = harness.tracker.timerStart("B")
        #expect(harness.tracker.timerRemove(a))
        #expect(harness.tracker.timerRemove(a) == false)
        #expect(harness.tracker.timerEnd(a) == false)
        harness.tracker.timersClear()
        #expect(harness.tracker.timerEnd(b) == false)
        #expect(harness.tracker.timerPause(b) == false)
        #expect(harness.tracker.timerResume(b) == false)
        #expect(await harness.flushedEvents().isEmpty)
    }

    @Test func timersUseTheMonotonicClockNotTheWallClock() async throws {
        let harness = try Harness()
        let id = harness.tracker.timerStart("T")
        harness.clock.setWall(testEpoch - 3_600_000)  // the user moves the clock back an hour
        harness.clock.advance(by: .seconds(4))
        harness.tracker.timerEnd(id)
        #expect(await harness.flushedEvents(named: "T").first?.properties["event_duration"] == .double(4))
    }
}
