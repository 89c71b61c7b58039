#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Termination-style signals (`SIGTERM`, `SIGINT`) turned into ordinary work on a thread of the package's.
///
/// The handler is installed before ``route(_:to:)`` returns, so a signal sent from then on is never lost; it only
/// writes the signal's number to a pipe (async-signal-safe), and the routing thread reads the pipe and runs the
/// routes outside signal context. A signal that arrives while no route wants it is handed on at once (the
/// disposition Spoor replaced, or the default action: the process ends), as if Spoor had never looked.
///
/// A dispatch signal source cannot do this on Linux: it needs the signal set to `SIG_IGN` first, the kernel
/// discards an ignored signal, and the source's handler is installed later on another thread; a signal in that
/// gap was lost.
package enum SignalRoutes {
    /// What ``route(_:to:)`` returns, to remove the route again.
    package struct Route: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct State {
        var routes: [Int: (signals: Set<Int32>, body: @Sendable (Int32) -> Void)] = [:]
        var nextID = 0
        /// The dispositions replaced, per signal; present once the handler is installed for it.
        var previous: [Int32: sigaction] = [:]
        var readEnd: Int32 = -1
    }

    private static let state = Locked(State())

    /// Runs `body` on the routing thread for each of `signals` delivered from now on, until ``remove(_:)``.
    /// `body` decides whether the process goes on; call ``handOn(_:)`` from it to let the signal end it.
    @discardableResult
    package static func route(_ signals: [Int32], to body: @escaping @Sendable (Int32) -> Void) -> Route {
        // Installing under the lock: a second caller must not see a signal as handled before its handler is in place.
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.routes[id] = (Set(signals), body)
            if s.readEnd < 0 {
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else { preconditionFailure("spoor: no pipe for signal routing (errno \(errno))") }
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
                // The handler must never block: a full pipe (thousands of unread signals) drops the extra ones.
                _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
                routingPipeWrite.store(fds[1], ordering: .releasing)
                s.readEnd = fds[0]
                let readEnd = fds[0]
                let reader = Thread { SignalRoutes.deliver(from: readEnd) }
                reader.name = "spoor.signals"
                reader.start()
            }
            for number in signals where s.previous[number] == nil {
                s.previous[number] = SystemCall.installHandler(writeSignalNumber, for: number, flags: SA_RESTART)
            }
            // A process started by a test runner or a shell may inherit a mask that blocks them.
            var set = sigset_t()
            sigemptyset(&set)
            for number in signals { sigaddset(&set, number) }
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            return Route(id: id)
        }
    }

    /// Stops running `route`'s body; its signals, if no other route wants them, are handed on again.
    package static func remove(_ route: Route) {
        _ = state.withLock { $0.routes.removeValue(forKey: route.id) }
    }

    /// Lets `signal` do what it would have done without Spoor: puts back the disposition Spoor replaced and
    /// raises it again (for `SIGTERM` and `SIGINT` by default, the process ends).
    package static func handOn(_ number: Int32) {
        let previous = state.withLock { s -> sigaction? in s.previous.removeValue(forKey: number) }
        if var previous { sigaction(number, &previous, nil) } else { signal(number, SIG_DFL) }
        raise(number)
    }

    private static func deliver(from readEnd: Int32) {
        var byte: UInt8 = 0
        while true {
            let count = SystemCall.retryingInterrupts { read(readEnd, &byte, 1) }
            guard count == 1 else { return }
            let number = Int32(byte)
            let bodies = state.withLock { s in s.routes.values.filter { $0.signals.contains(number) }.map(\.body) }
            if bodies.isEmpty { handOn(number) }
            for body in bodies { body(number) }
        }
    }
}

/// The routing pipe's write end, read by the signal handler: an atomic, because a signal handler may not take a
/// lock (lock-free atomic loads are async-signal-safe).
private let routingPipeWrite = Atomic<Int32>(-1)

private func writeSignalNumber(_ signal: Int32) {
    var byte = UInt8(truncatingIfNeeded: signal)
    let savedErrno = errno
    _ = write(routingPipeWrite.load(ordering: .acquiring), &byte, 1)
    errno = savedErrno
}
