package import SpoorModel

/// One moment as the lifecycle sees it: wall time for event timestamps, monotonic time for durations.
package struct LifecycleInstant: Sendable, Hashable, Codable {
    /// Wall-clock time, epoch milliseconds.
    package var wall: EpochMilliseconds
    /// Monotonic time in nanoseconds; only differences within one process mean anything.
    package var monotonic: UInt64

    package init(wall: EpochMilliseconds, monotonic: UInt64) {
        self.wall = wall
        self.monotonic = monotonic
    }
}

extension EventDuration {
    /// The duration from `start` to `end` (monotonic nanoseconds) as `event_duration`: 0 when `end` is
    /// before `start` (never negative) or the duration reaches a day.
    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        seconds(fromNanoseconds: end > start ? end - start : 0)
    }
}
