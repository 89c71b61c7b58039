import Foundation

/// A lock for the sources' small pieces of state (keeps `import Foundation` out of their public surface).
final class NSLockBox: @unchecked Sendable {
    private let lock = NSLock()

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
