#if canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
package import Musl
#elseif canImport(Darwin)
package import Darwin
#endif

/// The one place system calls are retried when a signal interrupts them.
package enum SystemCall {
    /// Calls `body` until it does not fail with `EINTR`: a signal arriving during a blocking call (the crash
    /// handler's, the lifecycle's SIGTERM) must not turn into a failed read or write. Returns the last result;
    /// on a negative result `errno` still holds its error.
    @inline(__always)
    package static func retryingInterrupts<T: SignedInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result < 0 && errno == EINTR { continue }
            return result
        }
    }

    /// Installs `handler` for `signal` with `flags` (`SA_RESTART`, or 0) and an empty mask; returns the
    /// disposition it replaced, for the handler to hand the signal on.
    @discardableResult
    package static func installHandler(
        _ handler: @convention(c) (Int32) -> Void, for signal: Int32, flags: Int32
    ) -> sigaction {
        var action = sigaction()
        #if canImport(Darwin)
        action.__sigaction_u.__sa_handler = handler
        #else
        action.__sigaction_handler.sa_handler = handler
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = flags
        var previous = sigaction()
        sigaction(signal, &action, &previous)
        return previous
    }
}
