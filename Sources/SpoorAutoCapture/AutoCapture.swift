import Foundation
internal import Logging
internal import SpoorModel
internal import SpoorSystem
public import SpoorTracker

/// Turns what the UI framework reports (pages appearing, actions sent, cells selected, gestures
/// recognized) into page and click events for a tracker, as its ``Configuration/AutoTrack/capture`` allows.
///
/// The UIKit and SwiftUI glue call this and decide nothing themselves; so can any host with a view tree of
/// its own. Thread-safe. Every capture of one tracker shares one state (its visible pages, selections under
/// way, gesture targets), so a page shown through one capture leaves through another. Calls decide under
/// one lock and reach the tracker after it, in the order they were decided: the tracker runs app code
/// (dynamic super properties, `onRejection`), and app code that calls back into the capture (a provider that
/// tracks a click) has its call queued behind the one under way instead of waiting on the lock.
public final class AutoCapture: Sendable {
    /// The tracker events go to.
    public let tracker: Tracker
    /// What is captured: the tracker's `configuration.autoTrack.capture`.
    public let options: AutoCaptureOptions
    private let ignore: AutoTrackIgnoreList
    private let logger: Logger
    private let state: Locked<State>

    private struct State {
        var pages = PageRegistry()
        /// Cell selections under way, by list and index path: a delegate method reached again inside one
        /// (an override calling `super`, a delegate forwarding to another) is the same click.
        var selections: Set<SelectionKey> = []
        var gestures = GestureTargets()
        var warned: Set<String> = []
        /// What was decided and not yet handed to the tracker, oldest first.
        var pending: [Delivery] = []
        /// A call is handing `pending` to the tracker; others queue behind it.
        var delivering = false
    }

    /// What a call hands the tracker, once the lock is released.
    private enum Delivery {
        case appear(id: String, page: PageInfo)
        case leave(id: String)
        case leaveGone(PageRegistry.Gone)
        case click(AppClick)
    }

    private struct SelectionKey: Hashable {
        var list: ObjectIdentifier
        var path: CellIndexPath
    }

    /// Captures for `tracker`, with its configuration's options and ignore lists; warnings go to its logger.
    /// Every capture of `tracker` shares the same pages and bookkeeping.
    public init(tracker: Tracker) {
        self.tracker = tracker
        options = tracker.configuration.autoTrack.capture
        ignore = tracker.configuration.autoTrack.ignore
        logger = tracker.configuration.diagnostics.logger
        state = Self.sharedState(of: tracker)
    }

    private var childPages: Bool { options.contains(.childPages) }
    /// `.childPages` implies `.pages`: child pages are pages too.
    private var capturesPages: Bool { !options.isDisjoint(with: [.pages, .childPages]) }

    // MARK: - The capture the hooks report to

    private static let current = Locked<AutoCapture?>(nil)

    /// The state of each tracker's captures, held while the tracker lives.
    private struct SharedState {
        weak var tracker: Tracker?
        let state: Locked<State>
    }

    private static let states = Locked<[ObjectIdentifier: SharedState]>([:])

    private static func sharedState(of tracker: Tracker) -> Locked<State> {
        states.withLock { states in
            let key = ObjectIdentifier(tracker)
            // A freed tracker's address can come back as a new one: its state is stale.
            if let shared = states[key], shared.tracker === tracker { return shared.state }
            states = states.filter { $0.value.tracker != nil }
            let state = Locked(State())
            states[key] = SharedState(tracker: tracker, state: state)
            return state
        }
    }

    /// The capture the installed hooks report to, if any.
    public static var installed: AutoCapture? { current.withLock { $0 } }

    /// Makes this the capture the installed hooks report to.
    public func makeInstalled() {
        Self.current.withLock { $0 = self }
    }

    /// A capture for `tracker`, for explicit calls such as `tracker.trackClick(on:)`: the installed one when
    /// it reports to `tracker`, else a new one sharing `tracker`'s pages, so a page tracked now leaves when
    /// the hooks see its controller disappear.
    public static func capture(for tracker: Tracker) -> AutoCapture {
        if let installed, installed.tracker === tracker { return installed }
        return AutoCapture(tracker: tracker)
    }

    // MARK: - Pages

    /// A view controller appeared. `object` is the controller: held weakly, it is the page's identity, so a
    /// page freed without disappearing leaves, and a later controller at the same address is a new page.
    /// Containers, system controllers and (unless `autoTrack.capture` has `.childPages`) child controllers are
    /// not pages.
    public func pageAppeared(_ page: any CapturedPage, object: AnyObject) {
        guard capturesPages, CaptureRules.isPage(page, childPages: childPages) else { return }
        show(page, object: object)
    }

    /// The controller `object` disappeared: its page leaves. A controller never shown as a page changes nothing.
    public func pageDisappeared(object: AnyObject) {
        let now = clockNow()
        apply { state in
            var deliveries = Self.sweep(&state, now: now)
            if let id = state.pages.remove(object) { deliveries.append(.leave(id: id)) }
            return deliveries
        }
    }

    /// Shows `page` as a page whatever the rules say, for controllers the hooks skip or cannot see; it
    /// leaves when `object` disappears or is freed.
    public func trackPage(_ page: any CapturedPage, object: AnyObject) {
        show(page, object: object)
    }

    private func show(_ page: any CapturedPage, object: AnyObject) {
        let info = CaptureRules.pageInfo(page)
        let now = clockNow()
        apply { state in
            Self.sweep(&state, now: now) + [.appear(id: state.pages.show(object, info: info, at: now), page: info)]
        }
    }

    /// Pages whose controllers were freed leave, timed to the last moment they were known visible; the
    /// others are known visible now. Runs first in every call, so clicks never land on a freed page.
    private static func sweep(_ state: inout State, now: PageRegistry.Instant) -> [Delivery] {
        state.pages.sweep(now: now).map(Delivery.leaveGone)
    }

    private func clockNow() -> PageRegistry.Instant {
        PageRegistry.Instant(
            wall: tracker.clock.wallMilliseconds(), monotonic: tracker.monotonicNanoseconds())
    }

    /// Decides under the lock what the tracker gets, then hands it over after the lock is released, in the
    /// order decided. A call made while another hands its deliveries over (from app code the tracker ran, or
    /// from another thread) queues behind them and returns; that other call delivers it.
    private func apply(_ decide: (inout State) -> [Delivery]) {
        let delivers = state.withLock { state -> Bool in
            state.pending += decide(&state)
            guard !state.delivering, !state.pending.isEmpty else { return false }
            state.delivering = true
            return true
        }
        guard delivers else { return }
        while let next = state.withLock({ state -> Delivery? in
            guard !state.pending.isEmpty else {
                state.delivering = false
                return nil
            }
            return state.pending.removeFirst()
        }) {
            switch next {
            case .appear(let id, let page): tracker.pageAppear(id, page: page)
            case .leave(let id): tracker.pageDisappear(id)
            case .leaveGone(let gone):
                tracker.pageDisappear(gone.id, lastSeenWall: gone.lastSeen.wall, lastSeenMonotonic: gone.lastSeen.monotonic)
            case .click(let click): tracker.trackClick(click)
            }
        }
    }

    // MARK: - Clicks

    /// The user tapped `view` (a gesture, a SwiftUI control, a built node): `$AppClick` unless the rules say
    /// otherwise (see ``CaptureRules/click(on:childPages:ignore:)``) or the page it is on is ignored.
    public func clicked(_ view: any CapturedView) {
        guard options.contains(.clicks) else { return }
        record(CaptureRules.click(on: view, childPages: childPages, ignore: ignore), explicit: false)
    }

    /// A click the app reports itself, for code paths the hooks cannot see: recorded even when `autoTrack.capture`
    /// lacks `.clicks`, the view is hidden or opted out, or its page is ignored. The tracker's ignore lists
    /// by element type and id still apply.
    public func trackClick(on view: any CapturedView) {
        let resolution = CaptureRules.resolve(view, childPages: childPages)
        let click = AppClick(
            elementType: CaptureRules.elementType(view), elementContent: CaptureRules.elementContent(view),
            elementID: CaptureRules.elementID(view), elementPosition: CaptureRules.elementPosition(view),
            elementPath: CaptureRules.elementPath(view, childPages: childPages),
            page: resolution.page.map(CaptureRules.pageInfo), customProperties: view.customProperties)
        record(click, explicit: true)
    }

    /// An action was sent (`UIApplication.sendAction`, or a control's `UIAction`). A click is recorded first
    /// (see ``CaptureRules/isClick(sender:event:)``), then `perform` runs the action, so an action that pops or
    /// dismisses the page cannot move the click to another one. `view` snapshots the sender, only when needed.
    /// A control drawn by SwiftUI is not one (see ``CaptureRules/isInsideSwiftUI(_:)``).
    public func actionSent<Result>(
        by sender: ActionSender, event: ActionEvent, view: () -> (any CapturedView)?, perform: () -> Result
    ) -> Result {
        if options.contains(.clicks), CaptureRules.isClick(sender: sender, event: event), let node = view(),
            !CaptureRules.isInsideSwiftUI(node)
        {
            record(CaptureRules.click(on: node, childPages: childPages, ignore: ignore), explicit: false)
        }
        return perform()
    }

    /// A selection delegate method was called on `receiver` for the cell at `indexPath` of `list`, whose
    /// delegate is now `listDelegate`. The click is recorded once, before `perform` runs the delegate's code:
    /// only when `receiver` is the list's delegate (a call forwarded to another object is not the user's
    /// selection), not from inside a selection of the same cell already under way (an override calling
    /// `super`), and not in a list SwiftUI draws. `cell` snapshots the cell; `delegateProperties` are the
    /// click's own (``SpoorListDelegate``), asked only for a click.
    public func cellSelected(
        in list: AnyObject, at indexPath: CellIndexPath, receiver: AnyObject, listDelegate: AnyObject?,
        cell: () -> (any CapturedView)?, delegateProperties: () -> Properties = { [:] }, perform: () -> Void
    ) {
        let key = SelectionKey(list: ObjectIdentifier(list), path: indexPath)
        guard state.withLock({ $0.selections.insert(key).inserted }) else { return perform() }
        defer { state.withLock { _ = $0.selections.remove(key) } }
        if options.contains(.clicks), receiver === listDelegate, let node = cell(), !CaptureRules.isInsideSwiftUI(node) {
            let click = CaptureRules.cellClick(
                on: node, delegateProperties: delegateProperties(), childPages: childPages, ignore: ignore)
            record(click, explicit: false)
        }
        perform()
    }

    /// Records `click` on its page (else the most recent visible page this tracker's captures know), unless
    /// that page is ignored and the click is not `explicit`.
    private func record(_ click: AppClick?, explicit: Bool) {
        guard var click else { return }
        let now = clockNow()
        apply { state in
            let deliveries = Self.sweep(&state, now: now)
            if click.page == nil, let current = state.pages.current { click.page = current }
            if !explicit, let page = click.page, CaptureRules.isIgnored(page, by: ignore) { return deliveries }
            return deliveries + [.click(click)]
        }
    }

    // MARK: - Gestures

    /// A target was added to a recognizer (at init or later); `typeNames` is the recognizer's class chain.
    /// Returns whether the glue should observe the recognizer: it is a tap or long-press recognizer and the
    /// target is the app's.
    @discardableResult
    public func gestureTargetAdded(to recognizer: AnyObject, typeNames: [String], target: AnyObject?, action: String?)
        -> Bool
    {
        guard options.contains(.clicks), CaptureRules.isClickRecognizer(typeNames), let target, let action,
            CaptureRules.isAppAction(action)
        else { return false }
        state.withLock { $0.gestures.add(target: target, action: action, to: recognizer) }
        return true
    }

    /// Targets were removed from a recognizer: a `nil` target or action removes every one that matches the other.
    public func gestureTargetRemoved(from recognizer: AnyObject, target: AnyObject?, action: String?) {
        state.withLock { $0.gestures.remove(target: target, action: action, from: recognizer) }
    }

    /// An observed recognizer called its targets in `phase`. A click when the gesture is over (see
    /// ``CaptureRules/isGestureClick(_:)``), the recognizer still has an app target alive, and its view accepts
    /// gesture clicks (not text entry, not web content, not drawn by SwiftUI).
    public func gestureRecognized(_ recognizer: AnyObject, phase: GesturePhase, view: () -> (any CapturedView)?) {
        guard CaptureRules.isGestureClick(phase), options.contains(.clicks),
            state.withLock({ $0.gestures.hasAppTarget(recognizer) }), let node = view(),
            CaptureRules.acceptsGestureClicks(node), !CaptureRules.isInsideSwiftUI(node)
        else { return }
        clicked(node)
    }

    // MARK: - Diagnostics

    /// A hook ran off the main thread, where UIKit must not be read: it captured nothing. Logged once per hook.
    public func hookReachedOffMainThread(_ hook: String) {
        warnOnce("off-main:\(hook)", "spoor: the \(hook) hook was reached off the main thread; nothing was captured")
    }

    /// A table or collection view got a delegate of type `typeName`, whose class the glue tried to hook for
    /// selection. A delegate that answers selection (`respondsToSelection`) with no method to hook forwards it
    /// (an `NSProxy`, an RxCocoa-style delegate proxy): its cell clicks are not captured, logged once per type.
    public func listDelegateSet(ofType typeName: String, hook: HookResult, respondsToSelection: Bool) {
        guard hook == .noImplementation, respondsToSelection else { return }
        warnOnce(
            "forwarding:\(typeName)",
            "spoor: \(typeName) forwards cell selection instead of implementing it; its cell clicks are not captured (call tracker.trackClick(on:) from the selection handler)"
        )
    }

    private func warnOnce(_ key: String, _ message: String) {
        guard state.withLock({ $0.warned.insert(key).inserted }) else { return }
        logger.warning("\(message)")
    }
}
