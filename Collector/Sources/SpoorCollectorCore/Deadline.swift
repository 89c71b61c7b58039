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
/// Beside SpoorSystem's `Promise.value(orAfter:_:)`, which races a value against a deadline and leaves whoever
/// owes the value running, this is the one deadline that cancels its work and waits for it to end. Each has its
/// place: `Promise` where the work is not the caller's to stop (a thread, a callback, another party's answer),
/// `withDeadline` where the work is a task the caller owns and nothing of it may outlive the call (a store's
/// query must not go on after its request was answered).
///
/// ```swift
/// let rows = try await withDeadline(.seconds(5)) {
///     try await database.query("SELECT 1")
/// }
/// ```
public func withDeadline<Success: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Success
) async throws -> Success {
    try await withThrowingTaskGroup(of: DeadlineOutcome<Success>.self) { group in
        group.addTask { .finished(try await operation()) }
        group.addTask {
            try await Task.sleep(for: timeout)
            return .timedOut
        }
        // Whichever ends first decides; the other is cancelled, and the group waits for it before returning.
        defer { group.cancelAll() }
        switch try await group.next() {
        case .finished(let value)?: return value
        case .timedOut?: throw DeadlineExceeded(timeout: timeout)
        case nil: preconditionFailure("the group has two tasks")
        }
    }
}

/// What ends first under ``withDeadline(_:_:)``.
private enum DeadlineOutcome<Success: Sendable>: Sendable {
    case finished(Success)
    case timedOut
}
