import Foundation
import SpoorSystem

/// How long a test waits for something that is bound to happen before it calls it a failure: minutes, so that a
/// loaded machine holding threads back for a while still passes, and a regression that hangs still fails. A
/// passing test never waits it out; a test never judges how fast something happened by it.
public let testBound: Duration = .seconds(300)

/// What `body` returns, or nil if it had not finished after `bound` of real time (it is then cancelled): a wait
/// that a regression would turn into a hang fails instead.
public func finished<T: Sendable>(within bound: Duration = testBound, _ body: @escaping @Sendable () async -> T) async -> T? {
    let result = Promise<T?>()
    let work = Task { result.fulfil(await body()) }
    let value = await result.value(orAfter: bound, nil)
    if value == nil { work.cancel() }
    return value
}

/// Runs `body` on a thread of its own and returns what it returns: for blocking work (a synchronous wait the
/// code under test offers, a semaphore) that must not hold one of the cooperative pool's few threads, which
/// every other test of the process needs. `body` must not record issues (it runs outside the test's task);
/// it returns what the test then checks.
public func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// `onThreadOfItsOwn` for work that cannot throw.
public func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(returning: body())
        }
    }
}

/// Runs `body(0)`, …, `body(count - 1)` at once, each on a thread of its own, and returns their results in that
/// order once all are done: concurrent callers that may block (`track()` waits when the buffer is full), without
/// holding the cooperative pool's threads.
public func onThreadsOfTheirOwn<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
    let results = Locked<[Int: T]>([:])
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
    if count > 0 { await allDone.value }
    return results.withLock { results in (0..<count).map { results[$0]! } }
}
