#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a mutex: the one lock of every Spoor package.
///
/// The value is reachable only inside ``withLock(_:)``, so what a lock guards is written down in its type rather
/// than in a comment. Decide under the lock, act outside it: bodies here only read and change the value and
/// return what the caller must do next (wake a thread, call a callback, write a file), and the caller does it
/// after the lock is released.
///
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer on Linux does not see `Mutex`'s
/// synchronization (Swift 6.3 reports every access under it as a race) and does see pthread mutexes; an
/// uncontended lock and unlock costs the same, and neither allocates per use. (`Synchronization.Atomic` has no
/// such problem, and serves only a flag read inside a signal handler.)
///
/// Keep a closure inside a struct rather than as the value itself (`Locked<Callback?>`, not
/// `Locked<(() -> Void)?>`): a function value stored as a generic value is wrapped in one more conversion thunk
/// each time `withLock` hands it out and takes it back, so each later call goes through one more layer.
///
/// ```swift
/// let counts = Locked([String: Int]())
/// let seen = counts.withLock { counts in
///     counts["batch", default: 0] += 1
///     return counts["batch"]!
/// }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched between lock and unlock of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Reachable from the inlinable bodies below, so that a caller in another module gets `withLock` specialized
    // for its closure rather than called through generic metadata; only ever touched with `mutex` held.
    @usableFromInline var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) {
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

    /// Runs `body` with the value, holding the lock, and returns what it returns.
    ///
    /// Keep `body` short and free of waits: it runs with every other caller of the lock held back. The lock is
    /// not recursive; calling `withLock` on the same lock from inside `body` deadlocks.
    @inlinable @inline(__always)
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free now and returns what it returns; returns nil without
    /// waiting when the lock is held.
    @inlinable
    public func withLockIfAvailable<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R? {
        guard tryLock() else { return nil }
        defer { unlock() }
        return try body(&value)
    }

    @usableFromInline func lock() {
        pthread_mutex_lock(mutex)
    }

    @usableFromInline func tryLock() -> Bool {
        pthread_mutex_trylock(mutex) == 0
    }

    @usableFromInline func unlock() {
        pthread_mutex_unlock(mutex)
    }
}

extension Locked where Value == Void {
    /// A lock that serializes work rather than guarding a value (a sync, a seal).
    public convenience init() { self.init(()) }

    /// Runs `body` holding the lock, and returns what it returns.
    @inlinable @inline(__always)
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try withLock { (_: inout Void) throws(E) -> R in try body() }
    }

    /// Runs `body` if the lock is free now, and returns what it returns; returns nil without waiting when the
    /// lock is held.
    @inlinable
    public func withLockIfAvailable<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R? {
        try withLockIfAvailable { (_: inout Void) throws(E) -> R in try body() }
    }
}
