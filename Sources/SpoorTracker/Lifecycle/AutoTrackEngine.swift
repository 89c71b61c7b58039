internal import SpoorModel

/// The auto-tracked event types, as named in `autoTrack` (docs/lifecycle.md, "Which events are emitted").
package enum AutoTrackEventKind: String, Sendable, Hashable, CaseIterable {
    case appStart, appStartPassively, appEnd, appViewScreen, appClick, appPageLeave, appCrashed

    /// The event name this kind emits.
    var eventName: String {
        switch self {
        case .appStart: "$AppStart"
        case .appStartPassively: "$AppStartPassively"
        case .appEnd: "$AppEnd"
        case .appViewScreen: "$AppViewScreen"
        case .appClick: "$AppClick"
        case .appPageLeave: "$AppPageLeave"
        case .appCrashed: "AppCrashed"
        }
    }
}

/// What the lifecycle asks the tracker to do, in order.
enum AutoTrackEffect: Sendable, Hashable {
    /// Track an auto event; `time` overrides the clock (recovered events are timed to the past).
    case emit(AutoTrackEventKind, Properties, time: EpochMilliseconds? = nil)
    /// Pause every running event timer (an end).
    case pauseTimers
    /// Resume the timers paused at the last end (a start).
    case resumeTimers
    /// Start an upload of what is stored.
    case flush
    /// Make everything tracked so far durable before returning, within a bounded wait (L9).
    case syncDurably
    /// Save the checkpoint (open session, visible pages, last-alive time) for crash recovery.
    case checkpoint
}

/// The whole of auto-tracking as a value: lifecycle state machine, pages, clicks. Signals and host calls
/// in, effects out; no clock, no I/O, so every rule is testable with plain values.
struct AutoTrackEngine: Sendable {
    private(set) var machine = LifecycleStateMachine()
    private(set) var pages = PageTracker()
    private var clicks = ClickDebouncer()
    /// Whether this process is the first launch ever on this install (persisted by the tracker).
    let isFirstLaunch: Bool
    /// Set once this process emitted its first start, after which `$is_first_time` is false.
    private var firstStartDone = false
    /// When the open session (`$AppStart` … `$AppEnd`) began.
    private(set) var sessionStart: LifecycleInstant?

    /// Pages and clicks left out.
    let ignore: AutoTrackIgnoreList

    init(isFirstLaunch: Bool, ignore: AutoTrackIgnoreList = AutoTrackIgnoreList()) {
        self.isFirstLaunch = isFirstLaunch
        self.ignore = ignore
    }

    var state: LifecycleState { machine.state }

    /// Applies a lifecycle signal.
    mutating func handle(_ signal: LifecycleSignal, now: LifecycleInstant) -> [AutoTrackEffect] {
        guard let transition = machine.handle(signal) else { return [] }
        var effects: [AutoTrackEffect] = []
        switch transition.to {
        case .started:
            sessionStart = now
            let start = AppStart(resumeFromBackground: transition.from != .initial, isFirstTime: takeFirstTime())
            effects.append(.emit(.appStart, start.properties))
            effects.append(.resumeTimers)
            effects += pages.appStarted(now: now.monotonic).map(Self.effect)
            effects.append(.flush)
        case .startedPassively:
            effects.append(.emit(.appStartPassively, AppStartPassively(isFirstTime: takeFirstTime()).properties))
        case .ended, .terminated:
            effects += endSession(now: now)
            effects.append(.pauseTimers)
            effects.append(.flush)
            if transition.to == .terminated { effects.append(.syncDurably) }
        case .initial:
            break
        }
        effects.append(.checkpoint)
        return effects
    }

    /// A page appears (P1, P2, P6).
    mutating func pageAppear(id: String, info: PageInfo, now: LifecycleInstant) -> [AutoTrackEffect] {
        guard !pages.visible.contains(where: { $0.id == id }) else { return [] }
        let ignored = ignore.ignores(info)
        let events = pages.appear(id: id, info: info, started: state == .started, now: now.monotonic, ignored: ignored)
        return ignored ? [] : events.map(Self.effect) + [.checkpoint]
    }

    /// A page disappears (P3).
    mutating func pageDisappear(id: String, now: LifecycleInstant) -> [AutoTrackEffect] {
        guard pages.visible.contains(where: { $0.id == id }) else { return [] }
        return pages.disappear(id: id, now: now.monotonic).map(Self.effect) + [.checkpoint]
    }

    /// A click on an element of the current page (docs/lifecycle.md, "Clicks").
    /// A click without a page gets the current page (the most recently appeared visible one).
    mutating func click(_ click: AppClick, now: LifecycleInstant) -> [AutoTrackEffect] {
        var click = click
        guard !ignore.ignores(click) else { return [] }
        if click.page == nil { click.page = pages.currentPage?.page }
        guard clicks.accept(click, screenName: click.page?.screenName, now: now.monotonic) else { return [] }
        return [.emit(.appClick, click.properties)]
    }

    /// Consent changed (the user opted out or in) while the lifecycle runs on. Opting out ends an open
    /// session as an end does (its events go out before the opt-out takes effect); opting in while started
    /// opens a new one from now, as a start does, so the recorded sessions stay paired and nothing from the
    /// quiet time is replayed. The state machine itself never stops.
    mutating func consentChanged(optedOut: Bool, now: LifecycleInstant) -> [AutoTrackEffect] {
        guard state == .started else { return [] }
        var effects: [AutoTrackEffect]
        if optedOut {
            effects = endSession(now: now)
            effects.append(.flush)
        } else {
            sessionStart = now
            effects = [.emit(.appStart, AppStart(resumeFromBackground: false, isFirstTime: takeFirstTime()).properties)]
            effects += pages.viewAllAgain(now: now.monotonic).map(Self.effect)
            effects.append(.flush)
        }
        effects.append(.checkpoint)
        return effects
    }

    /// Ends the open session for good (``Tracker/shutdown(timeout:)``): pages are left and `$AppEnd` goes
    /// out, as at an end, without a lifecycle signal.
    mutating func shutdown(now: LifecycleInstant) -> [AutoTrackEffect] {
        guard state == .started else { return [] }
        var effects = endSession(now: now)
        effects.append(.pauseTimers)
        effects.append(.checkpoint)
        return effects
    }

    /// The state crash recovery needs if this process dies now.
    func checkpoint(lastAlive: LifecycleInstant) -> LifecycleCheckpoint {
        LifecycleCheckpoint(
            state: state,
            sessionStart: sessionStart,
            pages: pages.visible.filter { $0.timerStart != nil },
            lastAlive: lastAlive
        )
    }

    private mutating func takeFirstTime() -> Bool {
        defer { firstStartDone = true }
        return isFirstLaunch && !firstStartDone
    }

    /// Leaves every timed page, then `$AppEnd` for the open session (the order of docs/lifecycle.md, "Rules").
    private mutating func endSession(now: LifecycleInstant) -> [AutoTrackEffect] {
        var effects = pages.appEnded(now: now.monotonic).map(Self.effect)
        if let start = sessionStart {
            let duration = EventDuration.seconds(from: start.monotonic, to: now.monotonic)
            effects.append(.emit(.appEnd, AppEnd(duration: duration).properties))
            sessionStart = nil
        }
        return effects
    }

    private static func effect(_ event: PageEvent) -> AutoTrackEffect {
        switch event {
        case .view(let properties): .emit(.appViewScreen, properties)
        case .leave(let properties): .emit(.appPageLeave, properties)
        }
    }
}
