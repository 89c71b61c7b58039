import Dispatch

/// A value delivered once, by whichever of several parties comes first, to any number of waiters.
///
/// The first ``fulfil(_:)`` wins and later ones are ignored, so a result and a deadline can race for the same
/// promise: ``value(orAfter:_:sleep:spawn:)`` is the package's one "first of result or deadline". Waiters are
/// tasks (``value``) or, where there is no task to suspend, threads (``wait(timeout:)``).
package final class Promise<Value: Sendable>: Sendable {
    private enum Slot {
        case waiting(tasks: [CheckedContinuation<Value, Never>], threads: [DispatchSemaphore])
        case fulfilled(Value)
    }

    private let slot = Locked(Slot.waiting(tasks: [], threads: []))

    package init() {}

    /// Delivers `value` unless the promise already has one; returns whether this call delivered it.
    @discardableResult
    package func fulfil(_ value: Value) -> Bool {
        let waiters = slot.withLock { slot -> (tasks: [CheckedContinuation<Value, Never>], threads: [DispatchSemaphore])? in
            guard case .waiting(let tasks, let threads) = slot else { return nil }
            slot = .fulfilled(value)
            return (tasks, threads)
        }
        guard let waiters else { return false }
        for task in waiters.tasks { task.resume(returning: value) }
        for thread in waiters.threads { thread.signal() }
        return true
    }

    /// The value, once delivered.
    package var value: Value {
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
    package var current: Value? {
        slot.withLock { slot in
            if case .fulfilled(let value) = slot { return value }
            return nil
        }
    }

    /// Blocks the calling thread until the value is delivered or `timeout` has passed (then nil). For callers
    /// that are not tasks and must wait, such as a process about to terminate; never from a `deinit`.
    package func wait(timeout: Duration) -> Value? {
        let signal = DispatchSemaphore(value: 0)
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
        let nanoseconds = Int(clamping: timeout.nanoseconds)
        _ = signal.wait(timeout: .now() + .nanoseconds(nanoseconds))
        // Delivered or not, the semaphore is no longer needed; a late `fulfil` signalling it is harmless.
        return current
    }

    /// The value, or `fallback` if `timeout` passes first: whichever comes first is delivered to every waiter.
    ///
    /// - Parameters:
    ///   - sleep: how to wait out `timeout`; throws when cancelled. Injected so tests drive time.
    ///   - spawn: how to start the timer task (the uploader runs its tasks on an executor of its own).
    package func value(
        orAfter timeout: Duration, _ fallback: Value,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        spawn: (@escaping @Sendable () async -> Void) -> Task<Void, Never> = { body in Task { await body() } }
    ) async -> Value {
        if let ready = current { return ready }
        let timer = spawn {
            do {
                try await sleep(timeout)
                self.fulfil(fallback)
            } catch {}
        }
        let result = await value
        timer.cancel()
        return result
    }
}
