#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
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

}
