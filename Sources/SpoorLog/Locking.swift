import Foundation

/// A mutex whose critical sections can throw typed errors.
final class Lock: @unchecked Sendable {
    private let lock = NSLock()

    @inline(__always)
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func lock_() { lock.lock() }
    func unlock() { lock.unlock() }
    func tryLock() -> Bool { lock.try() }
}
