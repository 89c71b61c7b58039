#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Time as every Spoor component reads it: the tracker (event `time`, durations, the lifecycle), the log (when a
/// batch was sealed, when to sync), the uploader (backoff, `Retry-After`, request timeouts) and ``Promise``'s
/// deadlines. One clock, injected once, so a test moves all of them together.
///
/// Two readings and a wait:
/// - ``now()`` is monotonic, from an arbitrary origin: durations and deadlines are measured on it, so a change of
///   the device's time never stretches or shortens them.
/// - ``wallMilliseconds()`` is the wall clock, in milliseconds since the Unix epoch: event `time`, calendar days,
///   `Retry-After` dates. It may jump (the user sets the device's time).
/// - ``sleep(for:)`` suspends the task for a duration of monotonic time.
///
/// The system's clock is ``SystemClock``; tests use `ManualClock` from the `SpoorTesting` product.
public protocol SpoorClock: Sendable {
    /// Monotonic time since an arbitrary origin (fixed for the clock's life).
    func now() -> Duration
    /// The wall clock: milliseconds since the Unix epoch.
    func wallMilliseconds() -> Int64
    /// Suspends for `duration` of this clock's monotonic time; throws `CancellationError` when the task is
    /// cancelled, whether before or during the sleep.
    func sleep(for duration: Duration) async throws
}

/// The system's clocks: `CLOCK_MONOTONIC` for ``now()``, `CLOCK_REALTIME` for ``wallMilliseconds()``, and
/// `Task.sleep` for ``sleep(for:)``. Reading it allocates nothing and takes no lock.
public struct SystemClock: SpoorClock {
    /// Creates the system clock.
    public init() {}

    /// `CLOCK_MONOTONIC`, whose origin is the system's (boot on Linux).
    public func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Duration(secondsComponent: Int64(ts.tv_sec), attosecondsComponent: Int64(ts.tv_nsec) * 1_000_000_000)
    }

    public func wallMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
