import SpoorModel
import SpoorSystem
import Testing

import SpoorTracker

/// The session rules on their own, on the events' times: no tracker, no clock.
@Suite("SessionState")
struct SessionStateTests {
    /// Sessions idle after 30 s, last at most 100 s; ids "s1", "s2", …
    static func sessions() -> SessionState {
        let counter = Locked(0)
        return SessionState(idleMilliseconds: 30_000, maxMilliseconds: 100_000) {
            "s\(counter.withLock { count in count += 1; return count })"
        }
    }

    @Test func eventsCloseTogetherShareASession() {
        var sessions = Self.sessions()
        let first = sessions.session(at: 1_000)
        #expect(first.session.id == "s1")
        #expect(first.ended == nil)
        #expect(sessions.session(at: 20_000).session.id == "s1")
        #expect(sessions.session(at: 49_999).session.id == "s1")  // 29.999 s after the last event
    }

    @Test func anIdleGapStartsANewSessionAndEndsTheOldOne() {
        var sessions = Self.sessions()
        let first = sessions.session(at: 1_000).session
        let next = sessions.session(at: 31_000)  // exactly the idle time
        #expect(next.session.id == "s2")
        #expect(next.ended === first)
    }

    @Test func aSessionEndsAtItsLongestEvenWhileBusy() {
        var sessions = Self.sessions()
        for time in stride(from: EpochMilliseconds(0), to: 100_000, by: 10_000) {
            #expect(sessions.session(at: time).session.id == "s1")
        }
        #expect(sessions.session(at: 100_000).session.id == "s2")
    }

    @Test func anEarlierEventDoesNotMoveTheLastEventBack() {
        var sessions = Self.sessions()
        _ = sessions.session(at: 20_000)
        _ = sessions.session(at: 5_000)  // a recovered or late event
        #expect(sessions.session(at: 49_000).session.id == "s1")  // idle counted from 20 s, not 5 s
    }

    @Test func endingLetsTheNextEventStartANewSession() {
        var sessions = Self.sessions()
        let first = sessions.session(at: 1_000).session
        #expect(sessions.end() === first)
        #expect(sessions.current == nil)
        #expect(sessions.end() == nil)
        let next = sessions.session(at: 1_001)
        #expect(next.session.id == "s2")
        #expect(next.ended == nil)
    }
}
