internal import SpoorCore

/// One moment as the lifecycle sees it: wall time for event timestamps, monotonic time for durations.
struct LifecycleInstant: Sendable, Hashable, Codable {
    /// Wall-clock time, epoch milliseconds.
    var wall: EpochMilliseconds
    /// Monotonic time in nanoseconds; only differences within one process mean anything.
    var monotonic: UInt64
}

/// `event_duration` values: seconds with three decimals, measured on the monotonic clock.
enum EventDuration {
    /// Durations of a day or more are reported as 0 (L11): such a value is a clock problem, not a session.
    static let limitMilliseconds: UInt64 = 24 * 60 * 60 * 1000

    /// The duration from `start` to `end` (monotonic nanoseconds) in seconds, rounded to the millisecond;
    /// 0 when `end` is before `start` or the duration reaches a day.
    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        guard end > start else { return 0 }
        let milliseconds = (end - start + 500_000) / 1_000_000
        guard milliseconds < limitMilliseconds else { return 0 }
        return Double(milliseconds) / 1000
    }
}
