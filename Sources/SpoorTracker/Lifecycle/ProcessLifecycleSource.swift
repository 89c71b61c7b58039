import Foundation
import SpoorSystem

/// The lifecycle source for programs without UIKit: Linux servers, command-line tools, desktop apps.
///
/// Process start is a user launch (`didFinishLaunching(.inactive)`, `didBecomeActive`). `SIGTERM`,
/// `SIGINT` and a normal `exit` end the session (`didEnterBackground`, `willTerminate`), which makes the
/// events durable within the tracker's bounded wait before the process goes. The host can also call
/// ``foreground()`` and ``background()`` (a desktop window losing focus, a daemon going idle).
///
/// ```swift
/// let tracker = try Tracker(configuration: configuration)
/// tracker.attach(ProcessLifecycleSource())
/// ```
public final class ProcessLifecycleSource: LifecycleSource, Sendable {
    private let handlesSignals: Bool
    private let handlesExit: Bool
    private let deliver = Locked<SignalDelivery?>(nil)

    /// Creates a process source.
    /// - Parameters:
    ///   - handlesSignals: end the session on `SIGTERM` and `SIGINT`, then let the signal end the process
    ///     as it would have. Pass `false` when the program handles those signals itself, and call
    ///     ``terminate()`` from its own handler.
    ///   - handlesExit: end the session when the process calls `exit` or returns from `main`.
    public init(handlesSignals: Bool = true, handlesExit: Bool = true) {
        self.handlesSignals = handlesSignals
        self.handlesExit = handlesExit
    }

    public func start(delivering deliver: @escaping @Sendable (LifecycleSignal) -> Void) {
        self.deliver.withLock { $0 = SignalDelivery(send: deliver) }
        if handlesExit { ProcessExitHooks.register(self) }
        if handlesSignals { TerminationSignals.register(self) }
        deliver(.didFinishLaunching(.inactive))
        deliver(.didBecomeActive)
    }

    public func stop() {
        deliver.withLock { $0 = nil }
        ProcessExitHooks.unregister(self)
        TerminationSignals.unregister(self)
    }

    /// The program comes back to the foreground: a hot start.
    public func foreground() {
        send(.willEnterForeground)
        send(.didBecomeActive)
    }

    /// The program goes to the background: the session ends.
    public func background() {
        send(.willResignActive)
        send(.didEnterBackground)
    }

    /// The program is about to end: the session ends and the tracker makes its events durable (bounded
    /// wait). Call it from your own signal handling when you pass `handlesSignals: false`.
    public func terminate() {
        send(.didEnterBackground)
        send(.willTerminate)
    }

    private func send(_ signal: LifecycleSignal) {
        deliver.withLock { $0 }?.send(signal)
    }
}

/// Runs `terminate()` on every started process source when the process exits normally.
private enum ProcessExitHooks {
    /// The started sources, and whether the `atexit` hook is registered.
    private static let state = Locked((sources: [ObjectIdentifier: ProcessLifecycleSource](), registered: false))

    static func register(_ source: ProcessLifecycleSource) {
        let first = state.withLock { s -> Bool in
            s.sources[ObjectIdentifier(source)] = source
            defer { s.registered = true }
            return !s.registered
        }
        if first { atexit { ProcessExitHooks.runAll() } }
    }

    static func unregister(_ source: ProcessLifecycleSource) {
        _ = state.withLock { $0.sources.removeValue(forKey: ObjectIdentifier(source)) }
    }

    private static func runAll() {
        guard !processIsCrashing else { return }
        let all = state.withLock { Array($0.sources.values) }
        for source in all { source.terminate() }
    }
}

/// Ends the session of every registered source on `SIGTERM` or `SIGINT`, then lets the signal do what it
/// would have done (the previous handler, or the default: the process ends). The work runs on the package's
/// signal thread, outside signal context (``SignalRoutes``).
private enum TerminationSignals {
    private struct State {
        var sources: [ObjectIdentifier: ProcessLifecycleSource] = [:]
        var routed = false
    }
    private static let state = Locked(State())

    static func register(_ source: ProcessLifecycleSource) {
        // Routing under the lock: a second source must not see `routed` before the handlers are in place.
        state.withLock { s in
            s.sources[ObjectIdentifier(source)] = source
            guard !s.routed else { return }
            s.routed = true
            SignalRoutes.route([SIGTERM, SIGINT]) { number in
                let all = TerminationSignals.state.withLock { Array($0.sources.values) }
                for source in all { source.terminate() }
                SignalRoutes.handOn(number)
            }
        }
    }

    static func unregister(_ source: ProcessLifecycleSource) {
        _ = state.withLock { $0.sources.removeValue(forKey: ObjectIdentifier(source)) }
    }
}
