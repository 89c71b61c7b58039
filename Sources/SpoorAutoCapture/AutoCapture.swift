import Foundation
internal import Logging
internal import SpoorModel
internal import SpoorSystem
public import SpoorTracker

/// Turns what the UI framework reports (pages appearing, actions sent, cells selected, gestures
/// recognized) into page and click events for a tracker, as its ``Configuration/autoCapture`` allows.
///
/// The UIKit and SwiftUI glue call this and decide nothing themselves; so can any host with a view tree of
/// its own. Thread-safe: calls are applied in order under one lock, and none holds it while app code (an
/// action, a delegate method) runs.
public final class AutoCapture: Sendable {
    /// The tracker events go to.
    public let tracker: Tracker
    /// What is captured: the tracker's `configuration.autoCapture`.
    public let options: AutoCaptureOptions
    private let ignore: AutoTrackIgnoreList
    private let logger: Logger
    private let state = Locked(State())

    private struct State {
        var pages = PageRegistry()
        /// Cell selections under way, by list and index path: a delegate method reached again inside one
        /// (an override calling `super`, a delegate forwarding to another) is the same click.
        var selections: Set<SelectionKey> = []
        var gestures = GestureTargets()
        var warned: Set<String> = []
    }

    private struct SelectionKey: Hashable {
        var list: ObjectIdentifier
        var path: CellIndexPath
    }

    /// Captures for `tracker`, with its configuration's options and ignore lists; warnings go to its logger.
    public init(tracker: Tracker) {
        self.tracker = tracker
        options = tracker.configuration.autoCapture
        ignore = tracker.configuration.autoTrackIgnore
        logger = tracker.configuration.logger
    }

    private var childPages: Bool { options.contains(.childPages) }
    /// `.childPages` implies `.pages`: child pages are pages too.
    private var capturesPages: Bool { !options.isDisjoint(with: [.pages, .childPages]) }

    // MARK: - The capture the hooks report to

    private static let current = Locked<AutoCapture?>(nil)

    /// The capture the installed hooks report to, if any.
    public static var installed: AutoCapture? { current.withLock { $0 } }

    /// Makes this the capture the installed hooks report to.
    public func makeInstalled() {
        Self.current.withLock { $0 = self }
    }

    /// The installed capture when it reports to `tracker`, else a new one for it: what explicit calls such
    /// as `tracker.trackClick(on:)` go through.
    public static func capture(for tracker: Tracker) -> AutoCapture {
        if let installed, installed.tracker === tracker { return installed }
        return AutoCapture(tracker: tracker)
    }

    // MARK: - Pages

    /// A view controller appeared. `object` is the controller: held weakly, it is the page's identity, so a
    /// page freed without disappearing leaves, and a later controller at the same address is a new page.
    /// Containers, system controllers and (unless `autoCapture` has `.childPages`) child controllers are
    /// not pages.
    public func pageAppeared(_ page: any CapturedPage, object: AnyObject) {
        guard capturesPages, CaptureRules.isPage(page, childPages: childPages) else { return }
        show(page, object: object)
    }

    /// The controller `object` disappeared: its page leaves. A controller never shown as a page changes nothing.
    public func pageDisappeared(object: AnyObject) {
        let now = clockNow()
        state.withLock { state in
            sweep(&state, now: now)
            if let id = state.pages.remove(object) { tracker.pageDisappear(id) }
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
        state.withLock { state in
            sweep(&state, now: now)
            let id = state.pages.show(object, info: info, at: now)
            tracker.pageAppear(id, page: info)
        }
    }

    /// Pages whose controllers were freed leave, timed to the last moment they were known visible; the
    /// others are known visible now. Runs first in every call, so clicks never land on a freed page.
    private func sweep(_ state: inout State, now: PageRegistry.Instant) {
        for gone in state.pages.sweep(now: now) {
            tracker.pageDisappear(gone.id, lastSeenWall: gone.lastSeen.wall, lastSeenMonotonic: gone.lastSeen.monotonic)
        }
    }

    private func clockNow() -> PageRegistry.Instant {
        PageRegistry.Instant(
            wall: tracker.configuration.wallClock.nowMilliseconds(),
            monotonic: tracker.configuration.monotonicClock.nowNanoseconds())
    }

    // MARK: - Clicks

    /// The user tapped `view` (a gesture, a SwiftUI control, a built node): `$AppClick` unless the rules say
    /// otherwise (see ``CaptureRules/click(on:childPages:ignore:)``) or the page it is on is ignored.
    public func clicked(_ view: any CapturedView) {
        guard options.contains(.clicks) else { return }
        record(CaptureRules.click(on: view, childPages: childPages, ignore: ignore), explicit: false)
    }

    /// A click the app reports itself, for code paths the hooks cannot see: recorded even when `autoCapture`
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

    /// An action was sent (`UIApplication.sendAction`). A click is recorded first (see
    /// ``CaptureRules/isClick(sender:event:)``), then `perform` runs the action, so an action that pops or
    /// dismisses the page cannot move the click to another one. `view` snapshots the sender, only when needed.
    public func actionSent<Result>(
        by sender: ActionSender, event: ActionEvent, view: () -> (any CapturedView)?, perform: () -> Result
    ) -> Result {
        if options.contains(.clicks), CaptureRules.isClick(sender: sender, event: event), let node = view() {
            record(CaptureRules.click(on: node, childPages: childPages, ignore: ignore), explicit: false)
        }
        return perform()
    }

    /// A selection delegate method was called on `receiver` for the cell at `indexPath` of `list`, whose
    /// delegate is now `listDelegate`. The click is recorded once, before `perform` runs the delegate's code:
    /// only when `receiver` is the list's delegate (a call forwarded to another object is not the user's
    /// selection) and not from inside a selection of the same cell already under way (an override calling
    /// `super`). The cell's click gets `receiver`'s ``SpoorListDelegate`` properties.
    public func cellSelected(
        in list: AnyObject, at indexPath: CellIndexPath, receiver: AnyObject, listDelegate: AnyObject?,
        cell: () -> (any CapturedView)?, perform: () -> Void
    ) {
        let key = SelectionKey(list: ObjectIdentifier(list), path: indexPath)
        guard state.withLock({ $0.selections.insert(key).inserted }) else { return perform() }
        defer { state.withLock { _ = $0.selections.remove(key) } }
        if options.contains(.clicks), receiver === listDelegate, let node = cell() {
            let extra = (receiver as? any SpoorListDelegate)?.spoorProperties(forCellAt: indexPath, in: list) ?? [:]
            record(CaptureRules.cellClick(on: node, delegateProperties: extra, childPages: childPages, ignore: ignore),
                   explicit: false)
        }
        perform()
    }

    /// Records `click` on its page (else the most recent visible page this capture knows), unless that page
    /// is ignored and the click is not `explicit`.
    private func record(_ click: AppClick?, explicit: Bool) {
        guard var click else { return }
        let now = clockNow()
        state.withLock { state in
            sweep(&state, now: now)
            if click.page == nil, let current = state.pages.current { click.page = current }
            if !explicit, let page = click.page, CaptureRules.isIgnored(page, by: ignore) { return }
            tracker.trackClick(click)
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

    /// An observed recognizer fired. A click when it `ended` (not began, changed or cancelled), it still has
    /// an app target alive, and its view accepts gesture clicks (not text entry, not web content).
    public func gestureRecognized(_ recognizer: AnyObject, ended: Bool, view: () -> (any CapturedView)?) {
        guard ended, options.contains(.clicks), state.withLock({ $0.gestures.hasAppTarget(recognizer) }),
            let node = view(), CaptureRules.acceptsGestureClicks(node)
        else { return }
        clicked(node)
    }

    // MARK: - Entering from a hook

    /// How every UIKit hook reaches the model: runs `body` on the main actor with `capture` (the installed
    /// one). A hook reached off the main thread captures nothing (UIKit must not be read there), logs once,
    /// and runs `otherwise`, the original method alone; so does one reached before any install. Never traps.
    /// `isMainThread` overrides the check of the caller's thread (`Thread.isMainThread`), for tests on a
    /// main actor that is not the process's main thread.
    public static func onMainThread<Result: Sendable>(
        _ hook: UIKitHook, capture: AutoCapture? = installed, isMainThread: Bool? = nil,
        otherwise: () -> Result, _ body: @MainActor (AutoCapture) -> Result
    ) -> Result {
        guard let capture else { return otherwise() }
        guard isMainThread ?? Thread.isMainThread else {
            capture.hookReachedOffMainThread(hook.rawValue)
            return otherwise()
        }
        return MainActor.assumeIsolated { body(capture) }
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

/// A value an Objective-C hook hands to the main actor. Hooks run on the main thread, and the value is used only
/// inside ``AutoCapture/onMainThread(_:capture:isMainThread:otherwise:_:)``, after it checked so: the value never
/// crosses threads, which is what `Sendable` would otherwise prove.
public struct MainThreadValue<Value>: @unchecked Sendable {
    /// The value.
    public let value: Value
    /// Wraps `value`.
    public init(_ value: Value) { self.value = value }
}

