import SpoorSystem

/// Thrown by ``withDeadline(_:_:)`` when the operation did not finish in time.
public struct DeadlineExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// The time the operation was given.
    public var timeout: Duration

    /// Creates the error.
    public init(timeout: Duration) { self.timeout = timeout }

    public var description: String { "no answer within \(timeout)" }
}

/// Runs `operation` with a deadline: its result or error when it ends within `timeout`; else it is cancelled and,
/// once it has ended, ``DeadlineExceeded`` is thrown.
///
/// Structured: nothing outlives the call, so `operation` must end promptly once cancelled. Work that cannot be
/// interrupted on its own (a query on a connection whose server hangs) ends through a cancellation handler that
/// closes what it waits on.
///
/// The race itself is SpoorSystem's `Promise.value(orAfter:_:)`, the one deadline helper; this adds what a task
/// the caller owns needs: when the deadline wins, the work is cancelled and waited for, so nothing of it outlives
/// the call (a store's query must not go on after its request was answered).
///
/// ```swift
/// let rows = try await withDeadline(.seconds(5)) {
///     try await database.query("SELECT 1")
/// }
/// ```
public func withDeadline<Success: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Success
) async throws -> Success {
    try await withThrowingTaskGroup(of: Void.self) { group in
        // The race is the one deadline helper's: the operation's outcome or nil, whichever comes first.
        let outcome = Promise<Result<Success, any Error>?>()
        group.addTask {
            do { outcome.fulfil(.success(try await operation())) } catch { outcome.fulfil(.failure(error)) }
        }
        let decided = await outcome.value(orAfter: timeout, nil)
        // A late operation is cancelled, and the group waits for it before returning: nothing outlives the call.
        group.cancelAll()
        guard let decided else { throw DeadlineExceeded(timeout: timeout) }
        return try decided.get()
    }
}
