// The SpoorSystem declarations the auto-capture module uses, with their signatures in Sources/SpoorSystem,
// for scripts/typecheck-apple-glue: `Locked` itself passes C pointers by `&`, which a Linux standard library
// does not support with Objective-C interop on. Bodies trap: nothing here runs.

package final class Locked<Value>: @unchecked Sendable {
    package init(_ value: Value) { fatalError() }
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R { fatalError() }
}

public protocol SpoorClock: Sendable {
    func now() -> Duration
    func wallMilliseconds() -> Int64
    func sleep(for duration: Duration) async throws
}
