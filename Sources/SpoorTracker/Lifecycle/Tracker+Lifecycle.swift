import Foundation
import SpoorModel

extension Tracker: AutoTrackSink {}

extension LifecycleOptions {
    /// The options a tracker's configuration asks for.
    init(configuration: Configuration) {
        self.init(storageDirectory: configuration.storageDirectory)
        enabled = Set(AutoTrackEventKind.allCases.filter { configuration.autoTrack.events.contains($0.option) })
        ignore = configuration.autoTrack.ignore
        heartbeatInterval = configuration.autoTrack.heartbeatInterval
    }
}

extension AutoTrackEventKind {
    /// The ``AutoTrackOptions`` member that switches this kind on.
    package var option: AutoTrackOptions {
        switch self {
        case .appStart: .appStart
        case .appStartPassively: .appStartPassively
        case .appEnd: .appEnd
        case .appViewScreen: .appViewScreen
        case .appClick: .appClick
        case .appPageLeave: .appPageLeave
        case .appCrashed: .appCrashed
        }
    }
}

// MARK: - Lifecycle, pages and clicks

extension Tracker {
    /// Attaches a lifecycle source: from now on its signals drive `$AppStart`, `$AppEnd`, page timing and
    /// flushes. Attach one source per tracker, right after creating it; the tracker keeps the source. Keep
    /// the tracker itself for the life of the process (a global or the app delegate).
    ///
    /// ```swift
    /// tracker.attach(ProcessLifecycleSource())          // Linux programs
    /// tracker.attach(NotificationCenterLifecycleSource(  // iOS apps
    ///     application: UIApplication.shared) { … })
    /// ```
    /// - Parameters:
    ///   - source: what delivers the platform's lifecycle signals.
    ///   - recordsCrashes: install a handler for fatal signals that records the crash in this process's
    ///     crash marker, so the next launch (or another process sharing the storage directory, once it adopts
    ///     this one's log) emits `AppCrashed` (it chains to any handler installed before it).
    public func attach(_ source: any LifecycleSource, recordsCrashes: Bool = true) {
        if recordsCrashes { lifecycle.installCrashHandler() }
        if let source = source as? NotificationCenterLifecycleSource, let hook = source.backgroundTask {
            backgroundTask.withLock { $0 = hook }
        }
        lifecycle.retain(source)
        source.start { [weak self] signal in self?.handle(signal) }
    }

    /// Feeds one lifecycle signal, for hosts that drive the lifecycle themselves (see
    /// ``ManualLifecycleSource``).
    public func handle(_ signal: LifecycleSignal) {
        lifecycle.handle(signal)
        // Every end starts an upload; it runs inside the background time the host grants.
        if signal == .didEnterBackground, let hook = backgroundTask.withLock({ $0 }) { uploadInBackground(hook) }
    }

    /// The lifecycle state.
    public var lifecycleState: LifecycleState { lifecycle.lifecycleState }

    /// A page appeared: `$AppViewScreen` while the app is started, held back until the user opens the app
    /// otherwise (P1, P6). `id` identifies the page instance (a view controller's identity, a route, a
    /// window); a page that is already visible changes nothing (P2).
    public func pageAppear(_ id: String, page: PageInfo) {
        lifecycle.pageAppear(id: id, info: page)
    }

    /// A page disappeared: `$AppPageLeave` with the time it was shown (P3).
    public func pageDisappear(_ id: String) {
        lifecycle.pageDisappear(id: id)
    }

    /// A page found gone after the fact (its object was freed without a disappear): `$AppPageLeave` timed to
    /// the last moment it was known visible, `lastSeenWall` epoch milliseconds and `lastSeenMonotonic`
    /// nanoseconds on the configuration's clocks, instead of now.
    package func pageDisappear(_ id: String, lastSeenWall: Int64, lastSeenMonotonic: UInt64) {
        lifecycle.pageDisappear(id: id, lastSeen: LifecycleInstant(wall: lastSeenWall, monotonic: lastSeenMonotonic))
    }

    /// A click on an element: `$AppClick`, with the current page's `$screen_name` and `$title` when the
    /// click names no page. Two clicks on the same element within 100 ms count once.
    public func trackClick(_ click: AppClick) {
        lifecycle.click(click)
    }

    /// Records a crash, so the next launch emits `AppCrashed` with `reason` (and the session's recovered
    /// `$AppEnd`). For hosts that catch fatal conditions themselves, such as an uncaught-exception
    /// handler; fatal signals are recorded by the handler ``attach(_:recordsCrashes:)`` installs.
    public func recordCrash(reason: String) {
        lifecycle.recordCrash(reason: reason)
    }

    /// Notes that the process is alive now, for crash recovery's timing. Attached trackers do this every
    /// few seconds on their own; call it from your own timer when you drive the tracker with a manual clock.
    public func noteAlive() {
        lifecycle.heartbeat()
    }
}
