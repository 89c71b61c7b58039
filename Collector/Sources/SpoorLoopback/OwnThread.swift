package import Foundation
import Synchronization

/// How long the tools that drive processes from outside wait for something that will happen (a line, an exit, a
/// connection) before they call it a hang: minutes, so that a loaded machine is never mistaken for a broken one,
/// and a waiter that is answered sooner pays nothing for it.
package let waitBound: Duration = .seconds(240)

/// Runs `work`, which blocks (waitpid, a semaphore, a blocking read), on a new thread of its own and returns what it
/// returns. A task awaits it without holding one of the cooperative pool's threads, which are as few as the cores.
package func onOwnThread<Value: Sendable, Failure: Error>(
    _ work: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
        Thread.detachNewThread { continuation.resume(returning: Result { () throws(Failure) in try work() }) }
    }
    return try result.get()
}

/// Runs `work` on a new thread of its own, as ``onOwnThread(_:)`` does, but waits at most `bound`: nil when the work
/// had not returned by then (it goes on, on its thread). For a call that must not wait for something, judged by
/// whether it returned while that something was held.
package func onOwnThread<Value: Sendable>(within bound: Duration, _ work: @escaping @Sendable () -> Value) async -> Value? {
    await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let answered = Mutex(false)
        let answer: @Sendable (Value?) -> Void = { value in
            let first = answered.withLock { answered in
                defer { answered = true }
                return !answered
            }
            if first { continuation.resume(returning: value) }
        }
        Thread.detachNewThread { answer(work()) }
        DispatchQueue.global().asyncAfter(deadline: .after(bound)) { answer(nil) }
    }
}

package extension DispatchTime {
    /// The moment `duration` from now, for the semaphore waits of threads that are not tasks.
    static func after(_ duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        return .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

package extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
