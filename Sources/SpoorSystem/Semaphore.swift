import Dispatch

/// The one way a thread (not a task) waits for another: a counting semaphore, so a signal given before the wait
/// is never lost. The decision to wait or to signal is taken under a ``Locked``; the signal is given after it is
/// released. Tasks never wait on it (they await a ``Promise``), since a blocked task holds one of the cooperative
/// pool's few threads.
package final class Semaphore: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    package init() {}

    /// Lets one waiter go on (now, or the next to wait).
    package func signal() {
        semaphore.signal()
    }

    /// Blocks the calling thread until a signal comes.
    package func wait() {
        semaphore.wait()
    }

    /// Blocks the calling thread until a signal comes or `timeout` has passed; returns whether the signal came.
    @discardableResult
    package func wait(timeout: Duration) -> Bool {
        semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: timeout.nanoseconds))) == .success
    }
}
