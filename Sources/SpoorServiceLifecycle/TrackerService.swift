// Compiled only with the package's `ServiceLifecycle` trait, which brings swift-service-lifecycle; without it this
// module is empty and an app that does not run a ServiceGroup fetches nothing for it.
#if ServiceLifecycle
public import ServiceLifecycle
public import SpoorTracker
import SpoorSystem

/// The tracker as a swift-service-lifecycle `Service`: it runs inside an application's `ServiceGroup` and, when the
/// group shuts down gracefully (SIGTERM, SIGINT) or cancels it, stores, uploads and closes what was tracked.
///
/// ```swift
/// let tracker = try Tracker(configuration: configuration)
/// let app = Application(router: router, services: [TrackerService(tracker: tracker)])
/// try await app.runService()
/// ```
///
/// A `ServiceGroup` shuts its services down one at a time, the last one first. Put the tracker's service **before**
/// every service that tracks (Hummingbird's `Application` puts its `services` before its HTTP server): the server then
/// finishes the requests in flight before the tracker stops, and no event tracked in them is lost.
///
/// `run()` does nothing until then: the tracker works on its own threads, and `track` is called on it directly.
/// At the end it waits at most ``uploadTimeout`` for every event accepted to be stored and uploaded, then at most
/// ``closeTimeout`` for the log to be closed, and returns. What was not uploaded in time stays in the storage
/// directory and goes at the next start. A group's `maximumGracefulShutdownDuration`, when set, should leave room for
/// both.
public struct TrackerService: Service, CustomStringConvertible {
    /// The tracker this service ends.
    public let tracker: Tracker
    /// The longest the shutdown waits for everything accepted to be stored and uploaded (10 s by default): a
    /// collector that is slow or gone delays the exit by no more than this.
    public var uploadTimeout: Duration
    /// The longest the shutdown then waits for the tracker to store the rest and close its log (5 s by default).
    public var closeTimeout: Duration
    /// Called once `run()` has ended the tracker, with what the shutdown did (for a log line, a metric, a test).
    public var onShutdown: (@Sendable (TrackerServiceShutdown) -> Void)?

    /// A service for `tracker`.
    ///
    /// - Parameters:
    ///   - tracker: the tracker; the service ends it, so nothing tracked after the group's shutdown is recorded.
    ///   - uploadTimeout: the bound of the final flush and upload.
    ///   - closeTimeout: the bound of closing the log afterwards.
    ///   - onShutdown: called once the tracker has been ended.
    public init(
        tracker: Tracker, uploadTimeout: Duration = .seconds(10), closeTimeout: Duration = .seconds(5),
        onShutdown: (@Sendable (TrackerServiceShutdown) -> Void)? = nil
    ) {
        self.tracker = tracker
        self.uploadTimeout = uploadTimeout
        self.closeTimeout = closeTimeout
        self.onShutdown = onShutdown
    }

    /// Waits for the group's graceful shutdown (or this task's cancellation), then flushes, uploads and closes the
    /// tracker within ``uploadTimeout`` and ``closeTimeout``. It never throws: a shutdown that ran out of time is
    /// reported to ``onShutdown`` and leaves the rest in storage.
    public func run() async throws {
        // Cancelled rather than shut down gracefully (another service failed): the tracker is ended all the same,
        // within the same bounds.
        let cancelled: Bool
        do {
            try await gracefulShutdown()
            cancelled = false
        } catch {
            cancelled = true
        }
        // The flush is raced against its bound rather than trusted to keep it: it first waits for the writer, and a
        // stuck disk must not hold the exit. Its task goes on unobserved if the bound comes first.
        let flushed = Promise<FlushResult?>()
        let tracker = tracker
        let uploadTimeout = uploadTimeout
        Task { flushed.fulfil(await tracker.flush(timeout: uploadTimeout)) }
        let result = await flushed.value(orAfter: uploadTimeout, nil)
        let closed = await tracker.shutdown(timeout: closeTimeout)
        onShutdown?(TrackerServiceShutdown(flush: result, closed: closed, cancelled: cancelled))
    }

    /// `TrackerService`, for the group's log lines.
    public var description: String { "TrackerService" }
}

/// What ``TrackerService`` did when its group shut down.
public struct TrackerServiceShutdown: Sendable, CustomStringConvertible {
    /// The final flush's result: the events delivered and what is still pending, and why; nil when it did not
    /// finish within ``TrackerService/uploadTimeout``.
    public var flush: FlushResult?
    /// Whether the log was closed within ``TrackerService/closeTimeout``.
    public var closed: Bool
    /// Whether the service was cancelled instead of shut down gracefully.
    public var cancelled: Bool

    /// Whether everything accepted was delivered and the log closed in time.
    public var isComplete: Bool { closed && (flush?.isComplete ?? false) }

    /// One line: the flush's result (or that it ran out of time) and whether the log was closed.
    public var description: String {
        let flushed = flush.map { "\($0)" } ?? "the flush did not finish in time"
        return "\(cancelled ? "cancelled" : "graceful"): \(flushed); log \(closed ? "closed" : "not closed in time")"
    }
}
#endif
