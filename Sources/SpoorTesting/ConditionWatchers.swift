import SpoorSystem

/// Tasks waiting for a condition over a double's state, each answered once: true when the condition holds
/// (looked at when the wait starts and at every ``check()``), false at its real-time deadline.
final class ConditionWatchers: Sendable {
    private struct Watcher {
        let condition: @Sendable () -> Bool
        let answer: Promise<Bool>
    }

    private let watchers = Locked<[Watcher]>([])

    /// Waits until `condition` holds; false if it did not within `timeout` of real time (a failing test ends
    /// instead of hanging).
    func wait(timeout: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        let answer = Promise<Bool>()
        watchers.withLock { $0.append(Watcher(condition: condition, answer: answer)) }
        check()
        let held = await answer.value(orAfter: timeout, false)
        watchers.withLock { $0.removeAll { $0.answer === answer } }
        return held
    }

    /// Looks at every condition again; the double calls it after the state they read changed. Conditions run
    /// outside the lock: they read the double's own locked state.
    func check() {
        let all = watchers.withLock { $0 }
        for watcher in all where watcher.condition() { watcher.answer.fulfil(true) }
    }
}
