public import SpoorModel
public import SpoorTracker
import SpoorSystem

/// A clock that moves only when told to: both a ``/SpoorTracker/WallClock`` and a ``/SpoorTracker/MonotonicClock``.
///
/// Advancing moves both readings together, as real time would. A tracker driven by one does not refresh its
/// lifecycle checkpoint on a timer: set ``/SpoorTracker/Configuration/heartbeatInterval`` to nil and call
/// `Tracker.noteAlive()` where the scenario says time passed with the app alive.
/// ```swift
/// let clock = ManualClock(wall: 1_700_000_000_000)
/// clock.advance(by: .seconds(90))
/// ```
public final class ManualClock: WallClock, MonotonicClock, Sendable {
    private struct Reading {
        var wall: EpochMilliseconds
        var monotonic: UInt64
    }

    private let reading: Locked<Reading>

    /// Creates a manual clock reading `wall` epoch milliseconds and `monotonic` nanoseconds.
    public init(wall: EpochMilliseconds = 1_700_000_000_000, monotonic: UInt64 = 1_000_000_000) {
        reading = Locked(Reading(wall: wall, monotonic: monotonic))
    }

    public func nowMilliseconds() -> EpochMilliseconds {
        reading.withLock { $0.wall }
    }

    public func nowNanoseconds() -> UInt64 {
        reading.withLock { $0.monotonic }
    }

    /// Moves both clocks forward by `duration` (negative durations are ignored).
    public func advance(by duration: Duration) {
        guard duration >= .zero else { return }
        let nanoseconds = UInt64(duration.nanoseconds)
        reading.withLock {
            $0.monotonic += nanoseconds
            $0.wall += EpochMilliseconds(nanoseconds / 1_000_000)
        }
    }

    /// Sets the wall clock alone, as when the user changes the device's time; the monotonic clock keeps going.
    public func setWall(_ milliseconds: EpochMilliseconds) {
        reading.withLock { $0.wall = milliseconds }
    }
}
