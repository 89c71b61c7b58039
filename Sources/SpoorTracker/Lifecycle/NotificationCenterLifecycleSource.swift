public import Foundation
import SpoorSystem

/// Observes a `NotificationCenter` for the six `UIApplication` lifecycle notifications, by their raw
/// names, and turns them into signals.
///
/// It does not import UIKit: on Apple platforms it sees UIKit's notifications; on Linux tests post the
/// same names. Notifications whose sender is not the given application object are ignored (apps
/// sometimes post these names themselves).
///
/// ```swift
/// let source = NotificationCenterLifecycleSource(application: UIApplication.shared) {
///     MainActor.assumeIsolated { UIApplication.shared.applicationState == .background ? .background : .active }
/// }
/// tracker.attach(source)
/// ```
public final class NotificationCenterLifecycleSource: LifecycleSource, Sendable {
    /// The UIKit notification names and the signals they carry (launch is handled apart).
    static let names: [(String, LifecycleSignal)] = [
        ("UIApplicationWillEnterForegroundNotification", .willEnterForeground),
        ("UIApplicationDidBecomeActiveNotification", .didBecomeActive),
        ("UIApplicationWillResignActiveNotification", .willResignActive),
        ("UIApplicationDidEnterBackgroundNotification", .didEnterBackground),
        ("UIApplicationWillTerminateNotification", .willTerminate),
    ]
    /// `UIApplicationDidFinishLaunchingNotification`.
    static let launchName = "UIApplicationDidFinishLaunchingNotification"

    private let center: NotificationCenter
    private let application: ObjectIdentifier
    private let applicationState: @Sendable () -> ApplicationState
    /// The observers added by ``start(delivering:)``, and the background-task hook.
    private let state = Locked((observers: [any NSObjectProtocol](), hook: BackgroundTaskHook?.none))

    /// Background time for the upload when the app goes to the background (`beginBackgroundTask` /
    /// `endBackgroundTask`, passed in by the host; see ``BackgroundTaskHook``). Set it before
    /// ``Tracker/attach(_:recordsCrashes:)``. Default nil: the end's upload gets no extra time.
    public var backgroundTask: BackgroundTaskHook? {
        get { state.withLock { $0.hook } }
        set { state.withLock { $0.hook = newValue } }
    }

    /// Creates a source.
    /// - Parameters:
    ///   - center: the centre the notifications are posted to.
    ///   - application: the application object (`UIApplication.shared`); notifications from other senders
    ///     are ignored. It must outlive the source (an application object does).
    ///   - applicationState: the application's state right now, read when the source starts (to catch up
    ///     when the tracker is created late, L2) and on launch (to tell a passive start).
    public init(
        center: NotificationCenter = .default,
        application: AnyObject,
        applicationState: @escaping @Sendable () -> ApplicationState
    ) {
        self.center = center
        self.application = ObjectIdentifier(application)
        self.applicationState = applicationState
    }

    deinit {
        for observer in state.withLock({ $0.observers }) { center.removeObserver(observer) }
    }

    public func start(delivering deliver: @escaping @Sendable (LifecycleSignal) -> Void) {
        let application = application
        let applicationState = applicationState
        let isFromApplication: @Sendable (Notification) -> Bool = { notification in
            guard let sender = notification.object else { return false }
            return ObjectIdentifier(sender as AnyObject) == application
        }
        var added: [any NSObjectProtocol] = []
        added.append(center.addObserver(
            forName: Notification.Name(Self.launchName), object: nil, queue: nil
        ) { notification in
            guard isFromApplication(notification) else { return }
            deliver(.didFinishLaunching(applicationState() == .background ? .background : .inactive))
        })
        for (name, signal) in Self.names {
            added.append(center.addObserver(forName: Notification.Name(name), object: nil, queue: nil) { notification in
                guard isFromApplication(notification) else { return }
                deliver(signal)
            })
        }
        state.withLock { $0.observers += added }
        for signal in LifecycleSignal.catchingUp(from: applicationState()) { deliver(signal) }
    }

    public func stop() {
        let removed = state.withLock { s in
            defer { s.observers = [] }
            return s.observers
        }
        for observer in removed { center.removeObserver(observer) }
    }
}
