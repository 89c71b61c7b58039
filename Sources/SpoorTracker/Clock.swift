public import SpoorModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SpoorLog
import SpoorSystem

/// A source of wall-clock time, in epoch milliseconds.
///
/// Event `time` comes from here. Inject a ``ManualClock`` in tests and simulations.
public protocol WallClock: Sendable {
    /// The current wall-clock time in milliseconds since the Unix epoch.
    func nowMilliseconds() -> EpochMilliseconds
}

/// A source of monotonic time, in nanoseconds from an arbitrary origin.
///
/// Durations (event timers, `$AppEnd`) come from here, so they are immune to wall-clock changes.
public protocol MonotonicClock: Sendable {
    /// The current monotonic time in nanoseconds.
    func nowNanoseconds() -> UInt64
}

/// The system's real-time clock (`CLOCK_REALTIME`).
public struct SystemWallClock: WallClock {
    /// Creates the system wall clock.
    public init() {}

    public func nowMilliseconds() -> EpochMilliseconds {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return EpochMilliseconds(ts.tv_sec) * 1000 + EpochMilliseconds(ts.tv_nsec) / 1_000_000
    }
}

/// The system's monotonic clock (`CLOCK_MONOTONIC`).
public struct SystemMonotonicClock: MonotonicClock {
    /// Creates the system monotonic clock.
    public init() {}

    public func nowNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// A clock that moves only when told to: both a ``WallClock`` and a ``MonotonicClock``.
///
/// Advancing moves both readings together, as real time would.
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
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return }
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
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
