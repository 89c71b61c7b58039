import Foundation

// The one way any Spoor package runs blocking work (waitpid, a blocking read or connect, a synchronous wait an
// API offers, a semaphore) from a task: on a new thread of its own, which fulfils a promise the task awaits. The
// cooperative pool has as many threads as the machine has cores (two on a small server or a CI runner), so one
// task blocking one of them halves what every other task gets, and two stop them all.

/// Runs `body`, which may block, on a new thread of its own, and returns what it returns (or throws what it
/// throws). The task awaiting it holds no thread of the cooperative pool meanwhile.
///
/// `body` runs outside the calling task: it does not see the task's cancellation, task-local values or (in a
/// test) its issue recording, so it returns what the caller then acts on or checks.
public func onThreadOfItsOwn<Value: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = Promise<Result<Value, Failure>>()
    Thread.detachNewThread { result.fulfil(Result { () throws(Failure) in try body() }) }
    return try await result.value.get()
}

/// Runs `body` on a new thread of its own, as ``onThreadOfItsOwn(_:)`` does, but waits at most `bound` of real
/// time for it: what it returned, or nil when it had not returned by then.
///
/// A thread cannot be stopped from outside, so a `body` still running at the bound goes on, on its thread, and
/// what it returns later is dropped. For a call judged by whether it returns while something it must not wait
/// for is held, and for a wait that a hang must not turn into a hung caller.
public func onThreadOfItsOwn<Value: Sendable>(
    within bound: Duration, _ body: @escaping @Sendable () -> Value
) async -> Value? {
    let result = Promise<Value?>()
    Thread.detachNewThread { result.fulfil(body()) }
    return await result.value(orAfter: bound, nil)
}

/// Runs `body(0)`, …, `body(count - 1)` at once, each on a new thread of its own, and returns their results in
/// that order once all are done: concurrent callers that may block (a producer waiting at a full buffer), without
/// holding the cooperative pool's threads.
public func onThreadsOfTheirOwn<Value: Sendable>(
    _ count: Int, _ body: @escaping @Sendable (Int) -> Value
) async -> [Value] {
    guard count > 0 else { return [] }
    let results = Locked<[Int: Value]>([:])
    let allDone = Promise<Void>()
    for index in 0..<count {
        Thread.detachNewThread {
            let result = body(index)
            let done = results.withLock { results -> Bool in
                results[index] = result
                return results.count == count
            }
            if done { allDone.fulfil(()) }
        }
    }
    await allDone.value
    return results.withLock { results in (0..<count).map { results[$0]! } }
}
