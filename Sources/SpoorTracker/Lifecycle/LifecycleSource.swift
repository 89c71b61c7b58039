import SpoorSystem

/// Something that turns a platform's lifecycle notifications into signals for a tracker.
///
/// Spoor ships ``NotificationCenterLifecycleSource`` (UIKit notification names, Apple platforms and
/// tests), ``ProcessLifecycleSource`` (Linux programs) and ``ManualLifecycleSource`` (the host sends
/// signals itself).
public protocol LifecycleSource: AnyObject, Sendable {
    /// Begins delivering signals to `deliver`, first those that bring a tracker created late up to date.
    /// The tracker calls it once, when the source is attached.
    func start(delivering deliver: @escaping @Sendable (LifecycleSignal) -> Void)
    /// Stops delivering signals.
    func stop()
}

/// A source the host drives itself: it calls ``send(_:)`` from its own lifecycle callbacks.
public final class ManualLifecycleSource: LifecycleSource, Sendable {
    private let deliver = Locked<SignalDelivery?>(nil)

    /// Creates a manual source.
    public init() {}

    public func start(delivering deliver: @escaping @Sendable (LifecycleSignal) -> Void) {
        self.deliver.withLock { $0 = SignalDelivery(send: deliver) }
    }

    public func stop() {
        deliver.withLock { $0 = nil }
    }

    /// Delivers `signal` to the attached tracker; does nothing while not attached.
    public func send(_ signal: LifecycleSignal) {
        deliver.withLock { $0 }?.send(signal)
    }
}

/// Where a source delivers its signals, in a struct: a closure kept directly as a `Locked`'s generic value is
/// wrapped in one more conversion thunk each time it is read back through `withLock`, so every delivery would
/// cost more than the last.
struct SignalDelivery: Sendable {
    let send: @Sendable (LifecycleSignal) -> Void
}
