/// The application state a launch happened in, as `UIApplication.applicationState` reports it during
/// `didFinishLaunching`.
public enum LaunchState: String, Sendable, Hashable, CaseIterable {
    /// The user launched the app: it is about to become active.
    case inactive
    /// The system launched the app in the background (background fetch, push, location…): a passive start.
    case background
}

/// The application's state when a tracker is created or a source is attached.
public enum ApplicationState: String, Sendable, Hashable, CaseIterable {
    /// The launch notifications have not been posted yet (the tracker is created early in the launch).
    case notRunning
    /// The app is launching or returning to the foreground; `didBecomeActive` is still to come.
    case inactive
    /// The app is in the foreground and the launch notifications already went by (late initialisation).
    case active
    /// The app runs in the background.
    case background
}

/// One lifecycle signal, mirroring a `UIApplicationDelegate` callback.
///
/// A lifecycle source turns platform notifications into these signals; the tracker's one state machine
/// consumes them.
public enum LifecycleSignal: Sendable, Hashable {
    /// `UIApplicationDidFinishLaunchingNotification`, with the application state at that moment.
    case didFinishLaunching(LaunchState)
    /// `UIApplicationWillEnterForegroundNotification`.
    case willEnterForeground
    /// `UIApplicationDidBecomeActiveNotification`.
    case didBecomeActive
    /// `UIApplicationWillResignActiveNotification`.
    case willResignActive
    /// `UIApplicationDidEnterBackgroundNotification`.
    case didEnterBackground
    /// `UIApplicationWillTerminateNotification`.
    case willTerminate

    /// The signals that bring a tracker created in `state` up to date: late initialisation (L2) while
    /// active is a cold start, while in the background a passive start; otherwise the real notifications
    /// are still to come.
    public static func catchingUp(from state: ApplicationState) -> [LifecycleSignal] {
        switch state {
        case .notRunning, .inactive: []
        case .active: [.didBecomeActive]
        case .background: [.didFinishLaunching(.background)]
        }
    }
}

/// The tracker's lifecycle state.
public enum LifecycleState: String, Sendable, Hashable, CaseIterable, Codable {
    /// No launch seen yet.
    case initial
    /// The user is in the app: a session is open.
    case started
    /// The system launched the app in the background; the user has not opened it.
    case startedPassively
    /// The app went to the background; the session is closed.
    case ended
    /// The app is terminating; no signal is accepted afterwards.
    case terminated
}
