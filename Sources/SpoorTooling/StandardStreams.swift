import Foundation
import SpoorSystem

/// The command line's standard output, written with the package's system-call layer.
public enum StandardOutput {
    /// Writes all of `bytes` to standard output; false when it is closed (a reader that went away).
    @discardableResult
    public static func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = SystemCall.retryingInterrupts {
                    Foundation.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }

    /// Whether standard output is a pipe or socket whose reader has gone away (`spoor events -f | head`).
    public static var isGone: Bool {
        var descriptor = pollfd(fd: 1, events: 0, revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLERR | POLLHUP) != 0
    }
}

/// SIGINT and SIGTERM, turned from process-ending signals into a request to stop, for a command that follows a
/// log until told to stop and then ends cleanly (its last lines written whole).
///
/// The handlers are in place when `init` returns: a signal sent right after it is never lost.
public final class StopSignals: Sendable {
    private let stopped = Promise<Void>()
    private let route: SignalRoutes.Route

    /// Starts handling the signals; they no longer end the process.
    public init() {
        let stopped = stopped
        route = SignalRoutes.route([SIGINT, SIGTERM]) { _ in stopped.fulfil(()) }
    }

    deinit {
        SignalRoutes.remove(route)
    }

    /// Waits up to `timeout`; true when a stop signal has come.
    public func wait(timeout: Duration) -> Bool {
        stopped.wait(timeout: timeout) != nil
    }
}
