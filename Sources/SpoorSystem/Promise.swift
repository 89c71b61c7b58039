/// A value delivered once, by whichever of several parties comes first, to any number of waiters.
///
/// The first ``fulfil(_:)`` wins and later ones are ignored, so a result and a deadline can race for the same
/// promise: ``value(orAfter:_:clock:spawn:)`` is the one "first of result or deadline" of every Spoor package.
/// Waiters are tasks (``value``) or, where there is no task to suspend, threads (``wait(timeout:)``).
///
/// It also replaces the semaphores, conditions and dispatch groups a thread would otherwise be joined with: the
/// thread fulfils the promise when it is done, and a task awaits it without holding a thread of the cooperative
/// pool.
///
/// ```swift
/// let done = Promise<Int>()
/// Thread.detachNewThread { done.fulfil(blockingWork()) }
/// let result = await done.value(orAfter: .seconds(60), -1)
/// ```
public final class Promise<Value: Sendable>: Sendable {
    private enum Slot {
        case waiting(tasks: [CheckedContinuation<Value, Never>], threads: [Semaphore])
        case fulfilled(Value)
    }

    private let slot = Locked(Slot.waiting(tasks: [], threads: []))

    /// A promise with no value yet.
    public init() {}

    /// Delivers `value` unless the promise already has one; returns whether this call delivered it.
    @discardableResult
    public func fulfil(_ value: Value) -> Bool {
        let waiters = slot.withLock { slot -> (tasks: [CheckedContinuation<Value, Never>], threads: [Semaphore])? in
            guard case .waiting(let tasks, let threads) = slot else { return nil }
            slot = .fulfilled(value)
            return (tasks, threads)
        }
        guard let waiters else { return false }
        for task in waiters.tasks { task.resume(returning: value) }
        for thread in waiters.threads { thread.signal() }
        return true
    }

    /// The value, once delivered: suspends the task (not its thread) until then.
    public var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = slot.withLock { slot -> Value? in
                    switch slot {
                    case .fulfilled(let value):
                        return value
                    case .waiting(let tasks, let threads):
                        slot = .waiting(tasks: tasks + [continuation], threads: threads)
                        return nil
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// The value if it has been delivered, without waiting.
    public var current: Value? {
        slot.withLock { slot in
            if case .fulfilled(let value) = slot { return value }
            return nil
        }
    }

    /// Blocks the calling thread until the value is delivered or `timeout` has passed (then nil). For callers
    /// that are not tasks and must wait, such as a process about to terminate; never from a `deinit`.
    public func wait(timeout: Duration) -> Value? {
        let signal = Semaphore()
        let ready = slot.withLock { slot -> Value? in
            switch slot {
            case .fulfilled(let value):
                return value
            case .waiting(let tasks, let threads):
                slot = .waiting(tasks: tasks, threads: threads + [signal])
                return nil
            }
        }
        if let ready { return ready }
        signal.wait(timeout: timeout)
        // Delivered or not, the semaphore is no longer needed; a late `fulfil` signalling it is harmless.
        return current
    }

    /// The value, or `fallback` if `timeout` passes first: whichever comes first is delivered to every waiter.
    ///
    /// The promise is only raced, never cancelled: whoever was going to deliver the value goes on, and its late
    /// ``fulfil(_:)`` is ignored. Where the work must be stopped at the deadline, the caller cancels it.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait for the value, from now.
    ///   - fallback: the value delivered if `timeout` passes first.
    ///   - clock: whose ``SpoorClock/sleep(for:)`` waits out `timeout` (the system's by default; tests pass a
    ///     manual clock to drive time).
    ///   - spawn: how to start the timer task (the uploader runs its tasks on an executor of its own).
    public func value(
        orAfter timeout: Duration, _ fallback: Value,
        clock: any SpoorClock = SystemClock(),
        spawn: (@escaping @Sendable () async -> Void) -> Task<Void, Never> = { body in Task { await body() } }
    ) async -> Value {
        if let ready = current { return ready }
        let timer = spawn {
            do {
                try await clock.sleep(for: timeout)
                self.fulfil(fallback)
            } catch {}
        }
        let result = await value
        timer.cancel()
        return result
    }
}
