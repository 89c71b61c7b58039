public import SpoorModel

import Foundation
import SpoorLog
import SpoorSystem

/// A source of wall-clock time, in epoch milliseconds.
///
/// Event `time` comes from here. Tests and simulations inject `ManualClock` from the `SpoorTesting` product.
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
