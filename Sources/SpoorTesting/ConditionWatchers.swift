import SpoorSystem

/// Tasks waiting for a condition over state that other threads or tasks change, each answered once: true when
/// the condition holds (looked at when the wait starts and at every ``check()``), false at its real-time
/// deadline.
///
/// The owner of the state calls ``check()`` after each change; a waiting test pays nothing while it waits and
/// never sleeps between looks. The deadline is a bound of minutes, so that a failing test ends instead of
/// hanging and a loaded machine that holds threads back for a while still passes.
///
/// ```swift
/// final class Inbox: Sendable {   // a test's own double
///     private let messages = Locked<[String]>([])
///     let watchers = ConditionWatchers()
///     func receive(_ message: String) {
///         messages.withLock { $0.append(message) }
///         watchers.check()
///     }
///     var count: Int { messages.withLock { $0.count } }
/// }
/// let arrived = await inbox.watchers.wait(timeout: .seconds(300)) { inbox.count >= 3 }
/// ```
public final class ConditionWatchers: Sendable {
    private struct Watcher {
        let condition: @Sendable () -> Bool
        let answer: Promise<Bool>
    }

    private let watchers = Locked<[Watcher]>([])

    /// Creates a set with no waiters.
    public init() {}

    /// Waits until `condition` holds; false if it did not within `timeout` of real time (a failing test ends
    /// instead of hanging).
    public func wait(timeout: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        let answer = Promise<Bool>()
        watchers.withLock { $0.append(Watcher(condition: condition, answer: answer)) }
        check()
        let held = await answer.value(orAfter: timeout, false)
        watchers.withLock { $0.removeAll { $0.answer === answer } }
        return held
    }

    /// Looks at every condition again; the owner of the state calls it after each change. Conditions run
    /// outside the lock: they read the owner's own locked state.
    public func check() {
        let all = watchers.withLock { $0 }
        for watcher in all where watcher.condition() { watcher.answer.fulfil(true) }
    }
}
