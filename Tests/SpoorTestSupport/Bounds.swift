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
