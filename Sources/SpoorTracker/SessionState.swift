import Foundation
import SpoorModel

/// A session id, held by reference so that events can point to it without retaining it (see `PendingEvent`).
package final class Session: Sendable {
    package let id: String
    package init(id: String) { self.id = id }
}

/// The session rules (docs/events.md, "Sessions"): an event joins the current session unless the session has
/// been idle for `idleMilliseconds` or has lasted `maxMilliseconds`; then a new one starts with it. Time is the
/// event's own (the caller's clock), so the rules run on whatever time a test gives them.
///
/// A pure value: no lock, no clock. New ids come from `makeID`.
package struct SessionState {
    package let idleMilliseconds: Int64
    package let maxMilliseconds: Int64
    private let makeID: @Sendable () -> String
    package private(set) var current: Session?
    /// When the current session started and when its latest event happened.
    private var start: EpochMilliseconds = 0
    private var last: EpochMilliseconds = 0

    package init(
        idleMilliseconds: Int64, maxMilliseconds: Int64, makeID: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.idleMilliseconds = idleMilliseconds
        self.maxMilliseconds = maxMilliseconds
        self.makeID = makeID
    }

    /// The session of an event at `time`, and the session it ended, if it started a new one (events already
    /// waiting may still point to the ended one).
    @inline(__always)
    package mutating func session(at time: EpochMilliseconds) -> (session: Session, ended: Session?) {
        if let current, time - last < idleMilliseconds, time - start < maxMilliseconds {
            last = max(last, time)
            return (current, nil)
        }
        let ended = current
        let new = Session(id: makeID())
        current = new
        start = time
        last = time
        return (new, ended)
    }

    /// Ends the current session: the next event starts a new one. Returns the session it ended.
    package mutating func end() -> Session? {
        defer { current = nil }
        return current
    }
}
