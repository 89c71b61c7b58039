#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a mutex: the one lock of the package.
///
/// The value is reachable only inside ``withLock(_:)``, so what a lock guards is written down in its type rather
/// than in a comment. Decide under the lock, act outside it: bodies here only read and change the value and
/// return what the caller must do next (wake a thread, call a callback, write a file), and the caller does it
/// after the lock is released.
///
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer on Linux does not see `Mutex`'s
/// synchronization (Swift 6.3 reports every access under it as a race) and does see pthread mutexes; an
/// uncontended lock and unlock costs the same, and neither allocates per use. (`Synchronization.Atomic` has no
/// such problem, and serves the one lone flag read on `track()`'s hot path.)
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched between lock and unlock of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        #if os(Linux)
        // Adaptive: spin a little before sleeping, as the critical sections here are a few dozen instructions.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        #else
        pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free now; returns nil without waiting when it is held.
    package func withLockIfAvailable<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension Locked where Value == Void {
    /// A lock that serializes work rather than guarding a value (a sync, a seal).
    package convenience init() { self.init(()) }

    /// Runs `body` holding the lock.
    @inline(__always)
    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try withLock { (_: inout Void) throws(E) -> R in try body() }
    }

    /// Runs `body` if the lock is free now; returns nil without waiting when it is held.
    package func withLockIfAvailable<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R? {
        try withLockIfAvailable { (_: inout Void) throws(E) -> R in try body() }
    }
}
