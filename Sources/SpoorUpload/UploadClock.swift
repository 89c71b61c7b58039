import Foundation

/// Time as the uploader sees it: injected, so tests drive backoff, `Retry-After` and timeouts without sleeping.
public protocol UploadClock: Sendable {
    /// Monotonic time since an arbitrary origin: deadlines are measured on it.
    func now() -> Duration
    /// The wall clock, in milliseconds since the epoch: for `Retry-After` dates and the next-attempt counter.
    func wallMilliseconds() -> Int64
    /// Suspends for `duration`; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's clocks: `ContinuousClock` and `Date`.
public struct SystemUploadClock: UploadClock {
    private let origin = ContinuousClock.now

    /// Creates the clock.
    public init() {}

    public func now() -> Duration { ContinuousClock.now - origin }

    public func wallMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
