import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
public final class ProcessLifecycleSource: LifecycleSource, @unchecked Sendable {
    private let handlesSignals: Bool
    private let handlesExit: Bool
    private let lock = NSLockBox()
    private var deliver: (@Sendable (LifecycleSignal) -> Void)?
    private var signalSources: [any DispatchSourceSignal] = []

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
        lock.withLock { self.deliver = deliver }
        if handlesExit { ProcessExitHooks.register(self) }
        if handlesSignals {
            var sources: [any DispatchSourceSignal] = []
            for signalNumber in [SIGTERM, SIGINT] {
                // Dispatch sees the signal only once its default action is off.
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global(qos: .userInitiated))
                source.setEventHandler { [weak self] in
                    self?.terminate()
                    // End the process the way the signal would have, so the exit status tells the truth.
                    signal(signalNumber, SIG_DFL)
                    raise(signalNumber)
                }
                source.resume()
                sources.append(source)
            }
            lock.withLock { signalSources = sources }
        }
        deliver(.didFinishLaunching(.inactive))
        deliver(.didBecomeActive)
    }

    public func stop() {
        let sources = lock.withLock {
            deliver = nil
            defer { signalSources = [] }
            return signalSources
        }
        for source in sources { source.cancel() }
        ProcessExitHooks.unregister(self)
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
        lock.withLock { deliver }?(signal)
    }
}

/// Runs `terminate()` on every started process source when the process exits normally.
private enum ProcessExitHooks {
    private static let lock = NSLockBox()
    nonisolated(unsafe) private static var sources: [ObjectIdentifier: ProcessLifecycleSource] = [:]
    nonisolated(unsafe) private static var registered = false

    static func register(_ source: ProcessLifecycleSource) {
        lock.withLock {
            sources[ObjectIdentifier(source)] = source
            guard !registered else { return }
            registered = true
            atexit { ProcessExitHooks.runAll() }
        }
    }

    static func unregister(_ source: ProcessLifecycleSource) {
        _ = lock.withLock { sources.removeValue(forKey: ObjectIdentifier(source)) }
    }

    private static func runAll() {
        let all = lock.withLock { Array(sources.values) }
        for source in all { source.terminate() }
    }
}
