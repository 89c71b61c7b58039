import Foundation
import SpoorSystem
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Signals raised in this test process: SIGUSR1 and SIGUSR2 only, which nothing else here routes.
@Suite(.serialized) struct SignalRoutesTests {
    /// A signal raised the moment `route` returns reaches the body on the routing thread: not in signal context,
    /// which would run it on the raising thread, inside `raise`.
    @Test func aSignalRightAfterRouteReachesTheBody() async {
        let delivered = Promise<(signal: Int32, onRaisingThread: Bool)>()
        let raiser = Locked<pthread_t?>(nil)
        let route = SignalRoutes.route([SIGUSR1]) { number in
            let onRaiser = raiser.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
            delivered.fulfil((number, onRaiser))
        }
        defer { SignalRoutes.remove(route) }
        await onThreadOfItsOwn {
            raiser.withLock { $0 = pthread_self() }
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            raise(SIGUSR1)
        }
        let received = await delivered.value(orAfter: testBound, (0, true))
        #expect(received.signal == SIGUSR1)
        #expect(!received.onRaisingThread)
    }

    /// Raises `number` on a new thread that does not block it. A cooperative thread may block signals (its mask
    /// is the pool's, not the one `route` unblocked on its caller's thread): a signal raised there would stay
    /// pending, and two pending alike merge into one.
    private func raiseUnblocked(_ number: Int32) async {
        await onThreadOfItsOwn {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, number)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            raise(number)
        }
    }

    /// Runs `body` on a thread of its own (raising from a cooperative thread would tie the test to the pool's).

    /// Every route that wants a signal runs; a removed one no longer does.
    @Test func everyRouteRunsUntilRemoved() async {
        let first = Locked<[Int32]>([]), second = Locked<[Int32]>([])
        let bothSaw = Promise<Void>(), secondSawAgain = Promise<Void>()
        let routeA = SignalRoutes.route([SIGUSR2]) { number in
            first.withLock { $0.append(number) }
        }
        let routeB = SignalRoutes.route([SIGUSR2]) { number in
            let count = second.withLock { $0.append(number); return $0.count }
            if count == 1 { bothSaw.fulfil(()) } else { secondSawAgain.fulfil(()) }
        }
        await raiseUnblocked(SIGUSR2)
        _ = await bothSaw.value(orAfter: testBound, ())
        SignalRoutes.remove(routeA)
        await raiseUnblocked(SIGUSR2)
        _ = await secondSawAgain.value(orAfter: testBound, ())
        SignalRoutes.remove(routeB)
        // Route A ran for the first signal only (its body ran before B's second call was delivered, on the same thread).
        #expect(first.withLock { $0 } == [SIGUSR2])
        #expect(second.withLock { $0 } == [SIGUSR2, SIGUSR2])
    }
}
