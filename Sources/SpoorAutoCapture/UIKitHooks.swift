// UIKit glue. No Apple SDK builds this package's CI, so it is only compiled on a Mac: docs/verifying-on-apple.md.
// Each hook snapshots what UIKit hands it and calls AutoCapture, where every rule lives (tested on Linux).
#if canImport(UIKit) && (os(iOS) || targetEnvironment(macCatalyst))
import Foundation
import ObjectiveC
public import SpoorModel
internal import SpoorSystem
public import SpoorTracker
public import UIKit

extension AutoCapture {
    /// Installs the UIKit hooks `autoCapture` asks for (``UIKitHook/needed(for:)``) and makes this the
    /// capture they report to. Call on the main thread, early (`application(_:didFinishLaunchingWithOptions:)`).
    /// Hooks stay for the process: a later call switches the capture and adds the hooks it needs that are
    /// missing. Reaches nothing app extensions lack (no `UIApplication.shared`).
    @MainActor public func installUIKitHooks() {
        makeInstalled()
        for hook in UIKitHook.needed(for: options) where UIKitHooks.installed.withLock({ $0.insert(hook).inserted }) {
            UIKitHooks.install(hook)
        }
    }
}

extension Tracker {
    /// `$AppClick` for `view`, for taps the hooks cannot see (see ``AutoCapture/trackClick(on:)``).
    @MainActor public func trackClick(on view: UIView) {
        AutoCapture.capture(for: self).trackClick(on: UIKitHooks.node(view))
    }

    /// Shows `controller` as a page whatever the page rules say. It leaves when it disappears (seen by the
    /// hooks ``AutoCapture/installUIKitHooks()`` installs for this tracker) or is freed.
    @MainActor public func trackPage(_ controller: UIViewController) {
        AutoCapture.capture(for: self).trackPage(UIKitHooks.page(controller), object: controller)
    }
}

@MainActor private enum AssociatedKeys {
    static var ignored: UInt8 = 0, elementID: UInt8 = 0, properties: UInt8 = 0
}

extension UIView {
    /// Leaves this view, and everything inside it, out of click capture.
    public var spoorIgnored: Bool {
        get { objc_getAssociatedObject(self, &AssociatedKeys.ignored) as? Bool ?? false }
        set { objc_setAssociatedObject(self, &AssociatedKeys.ignored, newValue, .OBJC_ASSOCIATION_RETAIN_NONATOMIC) }
    }

    /// `$element_id` for clicks on this view; it wins over the accessibility identifier.
    public var spoorElementID: String? {
        get { objc_getAssociatedObject(self, &AssociatedKeys.elementID) as? String }
        set { objc_setAssociatedObject(self, &AssociatedKeys.elementID, newValue, .OBJC_ASSOCIATION_COPY_NONATOMIC) }
    }

    /// Properties added to clicks on this view (on a table or collection view: to clicks on its cells).
    public var spoorProperties: Properties {
        get { objc_getAssociatedObject(self, &AssociatedKeys.properties) as? Properties ?? [:] }
        set { objc_setAssociatedObject(self, &AssociatedKeys.properties, newValue, .OBJC_ASSOCIATION_RETAIN_NONATOMIC) }
    }
}

/// One selector on the Objective-C runtime, for ``MethodHooks``.
private struct ObjCMethod: MethodTable {
    let selector: Selector
    func implementation(in cls: AnyClass) -> IMP? { class_getInstanceMethod(cls, selector).map(method_getImplementation) }
    func superclass(of cls: AnyClass) -> AnyClass? { class_getSuperclass(cls) }
    func definesOwn(in cls: AnyClass) -> Bool {
        guard let own = class_getInstanceMethod(cls, selector) else { return false }
        return class_getSuperclass(cls).flatMap { class_getInstanceMethod($0, selector) } != own
    }
    func add(_ implementation: IMP, to cls: AnyClass) -> Bool {
        class_addMethod(cls, selector, implementation, class_getInstanceMethod(cls, selector).flatMap(method_getTypeEncoding))
    }
    func replace(in cls: AnyClass, with implementation: IMP) {
        if let own = class_getInstanceMethod(cls, selector) { method_setImplementation(own, implementation) }
    }
}

/// Receives the actions of the app's tap and long-press recognizers, ahead of the app's own targets.
private final class GestureObserver: NSObject, Sendable {
    static let shared = GestureObserver()

    @objc func recognized(_ recognizer: UIGestureRecognizer) {
        UIKitHooks.withCapture(.gestures, otherwise: {}) { capture in
            capture.gestureRecognized(recognizer, ended: recognizer.state == .ended) { recognizer.view.map(UIKitHooks.node) }
        }
    }
}

enum UIKitHooks {
    static let installed = Locked<Set<UIKitHook>>([])
    private static let hooks = Locked(MethodHooks())

    /// Runs `body` on the main actor with the installed capture. Off the main thread (or with no capture
    /// installed) it captures nothing, logs, and runs `otherwise`: the original method alone.
    static func withCapture<R: Sendable>(_ hook: UIKitHook, otherwise: () -> R, _ body: @MainActor (AutoCapture) -> R) -> R {
        guard let capture = AutoCapture.installed else { return otherwise() }
        guard Thread.isMainThread else {
            capture.hookReachedOffMainThread(hook.rawValue)
            return otherwise()
        }
        return MainActor.assumeIsolated { body(capture) }
    }

    /// Hooks `selector` on `cls` with the block `makeBlock` builds around a function giving the original.
    @discardableResult
    private static func hook(_ cls: AnyClass, _ selector: Selector, _ makeBlock: (_ original: @escaping () -> IMP) -> Any) -> HookResult {
        hooks.withLock { hooks in
            hooks.hook(cls, method: NSStringFromSelector(selector), in: ObjCMethod(selector: selector)) { original in
                imp_implementationWithBlock(makeBlock(original))
            }
        }
    }

    static func install(_ hook: UIKitHook) {
        switch hook {
        case .pages: installPages()
        case .actions: installActions()
        case .cellSelection: installCellSelection()
        case .gestures: installGestures()
        case .alertActions: installAlertActions()
        }
    }

    // Blocks below receive values that are not Sendable. Each goes to the main actor only inside
    // `withCapture`, after it checked that this is the main thread, and only for the synchronous call there:
    // hence `nonisolated(unsafe)`.

    private static func installPages() {
        typealias Fn = @convention(c) (UIViewController, Selector, Bool) -> Void
        for (selector, appeared) in [(#selector(UIViewController.viewDidAppear(_:)), true), (#selector(UIViewController.viewDidDisappear(_:)), false)] {
            hook(UIViewController.self, selector) { original in
                let block: @convention(block) (UIViewController, Bool) -> Void = { controller, animated in
                    unsafeBitCast(original(), to: Fn.self)(controller, selector, animated)
                    withCapture(.pages, otherwise: {}) { capture in
                        if appeared { capture.pageAppeared(page(controller), object: controller) } else { capture.pageDisappeared(object: controller) }
                    }
                }
                return block
            }
        }
    }

    private static func installActions() {
        typealias Fn = @convention(c) (UIApplication, Selector, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool
        let selector = #selector(UIApplication.sendAction(_:to:from:for:))
        hook(UIApplication.self, selector) { original in
            let block: @convention(block) (UIApplication, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool = { application, action, target, sender, event in
                nonisolated(unsafe) let sender = sender, event = event
                nonisolated(unsafe) let send = { unsafeBitCast(original(), to: Fn.self)(application, selector, action, target, sender, event) }
                return withCapture(.actions, otherwise: send) { capture in
                    capture.actionSent(by: actionSender(sender), event: actionEvent(event), view: { (sender as? UIView).map(node) }, perform: send)
                }
            }
            return block
        }
    }

    private static func installCellSelection() {
        typealias SetFn = @convention(c) (UIScrollView, Selector, AnyObject?) -> Void
        let setDelegate = #selector(setter: UITableView.delegate)
        let lists: [(AnyClass, Selector)] = [
            (UITableView.self, #selector(UITableViewDelegate.tableView(_:didSelectRowAt:))),
            (UICollectionView.self, #selector(UICollectionViewDelegate.collectionView(_:didSelectItemAt:))),
        ]
        for (list, selection) in lists {
            hook(list, setDelegate) { original in
                let block: @convention(block) (UIScrollView, AnyObject?) -> Void = { view, delegate in
                    unsafeBitCast(original(), to: SetFn.self)(view, setDelegate, delegate)
                    guard let delegate, let delegateClass = object_getClass(delegate) else { return }
                    // Hooked per delegate class; one that only forwards the message has no method to hook.
                    if hookSelection(delegateClass, selection) == .noImplementation, (delegate as? NSObjectProtocol)?.responds(to: selection) == true {
                        AutoCapture.installed?.selectionForwarded(byDelegateOfType: NSStringFromClass(delegateClass))
                    }
                }
                return block
            }
        }
    }

    private static func hookSelection(_ delegateClass: AnyClass, _ selector: Selector) -> HookResult {
        typealias Fn = @convention(c) (AnyObject, Selector, UIScrollView, NSIndexPath) -> Void
        return hook(delegateClass, selector) { original in
            let block: @convention(block) (AnyObject, UIScrollView, NSIndexPath) -> Void = { receiver, list, path in
                nonisolated(unsafe) let receiver = receiver
                nonisolated(unsafe) let select = { unsafeBitCast(original(), to: Fn.self)(receiver, selector, list, path) }
                let indexPath = path as IndexPath
                withCapture(.cellSelection, otherwise: select) { capture in
                    capture.cellSelected(
                        in: list, at: CellIndexPath(section: indexPath.section, item: indexPath.item), receiver: receiver,
                        listDelegate: delegate(of: list), cell: { cell(in: list, at: indexPath).map(node) }, perform: select)
                }
            }
            return block
        }
    }

    private static func installGestures() {
        typealias InitFn = @convention(c) (Unmanaged<UIGestureRecognizer>, Selector, AnyObject?, Selector?) -> Unmanaged<UIGestureRecognizer>?
        typealias TargetFn = @convention(c) (UIGestureRecognizer, Selector, AnyObject?, Selector?) -> Void
        let initializer = #selector(UIGestureRecognizer.init(target:action:))
        hook(UIGestureRecognizer.self, initializer) { original in
            // Unmanaged in and out: an initializer consumes its receiver and returns its result retained, which
            // the original does with both, untouched here.
            let block: @convention(block) (Unmanaged<UIGestureRecognizer>, AnyObject?, Selector?) -> Unmanaged<UIGestureRecognizer>? = { this, target, action in
                let result = unsafeBitCast(original(), to: InitFn.self)(this, initializer, target, action)
                guard let recognizer = result?.takeUnretainedValue(), let target, let action else { return result }
                // Taken out and put back through the hooked addTarget, which puts the observer ahead of it.
                nonisolated(unsafe) let pair = (target, action)
                withCapture(.gestures, otherwise: {}) { _ in
                    recognizer.removeTarget(pair.0, action: pair.1)
                    recognizer.addTarget(pair.0, action: pair.1)
                }
                return result
            }
            return block
        }
        for (selector, adds) in [(#selector(UIGestureRecognizer.addTarget(_:action:)), true), (#selector(UIGestureRecognizer.removeTarget(_:action:)), false)] {
            hook(UIGestureRecognizer.self, selector) { original in
                let block: @convention(block) (UIGestureRecognizer, AnyObject?, Selector?) -> Void = { recognizer, target, action in
                    let call = unsafeBitCast(original(), to: TargetFn.self)
                    let capture = AutoCapture.installed, name = action.map(NSStringFromSelector)
                    if !adds {
                        capture?.gestureTargetRemoved(from: recognizer, target: target, action: name)
                    } else if target !== GestureObserver.shared, capture?.gestureTargetAdded(
                        to: recognizer, typeNames: classNames(object_getClass(recognizer)), target: target, action: name) == true {
                        // The observer first, so the click is recorded before the app's action runs.
                        call(recognizer, selector, GestureObserver.shared, #selector(GestureObserver.recognized(_:)))
                    }
                    call(recognizer, selector, target, action)
                }
                return block
            }
        }
    }

    private static func installAlertActions() {
        typealias Handler = @convention(block) (UIAlertAction) -> Void
        typealias Fn = @convention(c) (AnyClass, Selector, NSString?, UIAlertAction.Style, Handler?) -> UIAlertAction
        let selector = NSSelectorFromString("actionWithTitle:style:handler:")
        guard let metaclass = object_getClass(UIAlertAction.self) else { return }
        hook(metaclass, selector) { original in
            let block: @convention(block) (AnyClass, NSString?, UIAlertAction.Style, Handler?) -> UIAlertAction = { cls, title, style, handler in
                let tracked: Handler = { action in
                    nonisolated(unsafe) let action = action
                    withCapture(.alertActions, otherwise: {}) { $0.clicked(CaptureRules.alertAction(title: action.title)) }
                    handler?(action)
                }
                return unsafeBitCast(original(), to: Fn.self)(cls, selector, title, style, tracked)
            }
            return block
        }
    }

    // MARK: - Snapshots

    static func classNames(_ cls: AnyClass?) -> [String] {
        var names: [String] = []
        var current = cls
        while let found = current {
            names.append(CaptureRules.className(NSStringFromClass(found)))
            current = class_getSuperclass(found)
        }
        return names
    }

    @MainActor static func page(_ controller: UIViewController) -> PageNode {
        let shown = (controller as? UINavigationController)?.topViewController
            ?? (controller as? UITabBarController)?.selectedViewController
            ?? (controller as? UIPageViewController)?.viewControllers?.first
        return PageNode(
            typeNames: classNames(type(of: controller)), parentTypeNames: controller.parent.map { classNames(type(of: $0)) },
            titleView: controller.navigationItem.titleView.map { snapshot($0, parent: nil, content: true) },
            navigationItemTitle: controller.navigationItem.title, title: controller.title,
            custom: (controller as? any SpoorPage).map(CustomPage.init),
            ignoresAutoCapture: controller is any SpoorIgnoresAutoCapture, shownChild: shown.map(page))
    }

    /// `view` with its content, under its superviews up to the window.
    @MainActor static func node(_ view: UIView) -> ViewNode {
        let ancestors = Array(sequence(first: view, next: { $0.superview }).dropFirst())
        let parent = ancestors.reversed().reduce(nil as ViewNode?) { snapshot($1, parent: $0, content: false) }
        return snapshot(view, parent: parent, content: true)
    }

    @MainActor private static func snapshot(_ view: UIView, parent: ViewNode?, content: Bool) -> ViewNode {
        ViewNode(
            typeNames: classNames(type(of: view)), kind: kind(of: view), accessibilityIdentifier: view.accessibilityIdentifier,
            elementID: view.spoorElementID, text: content ? text(of: view) : nil, isHidden: view.isHidden,
            siblingIndex: view.superview?.subviews.filter { type(of: $0) == type(of: view) }.firstIndex { $0 === view } ?? 0,
            indexPath: indexPath(of: view), parent: parent,
            children: content ? view.subviews.map { snapshot($0, parent: nil, content: true) } : [],
            page: (view.next as? UIViewController).map(page),
            ignoresAutoCapture: view.spoorIgnored || view is any SpoorIgnoresAutoCapture, customProperties: view.spoorProperties)
    }

    @MainActor private static func kind(of view: UIView) -> ViewKind {
        switch view {
        case let toggle as UISwitch: .toggle(isOn: toggle.isOn)
        case let stepper as UIStepper: .stepper(value: stepper.value)
        case let slider as UISlider: .slider(value: Double(slider.value), isTracking: slider.isTracking)
        case let dots as UIPageControl: .pageControl(current: dots.currentPage)
        case let segments as UISegmentedControl:
            .segmented(selected: segments.selectedSegmentIndex, titles: (0..<segments.numberOfSegments).map { segments.titleForSegment(at: $0) })
        case is UITextField, is UITextView, is UISearchBar: .textInput
        case is UITableView, is UICollectionView: .list
        case is UITableViewCell, is UICollectionViewCell: .cell
        default: .plain
        }
    }

    @MainActor private static func text(of view: UIView) -> String? {
        switch view {
        case let label as UILabel: label.text
        case let button as UIButton: button.titleLabel?.text ?? button.configuration?.title
        default: nil
        }
    }

    @MainActor private static func indexPath(of view: UIView) -> CellIndexPath? {
        let around = sequence(first: view, next: { $0.superview }).dropFirst()
        var path: IndexPath?
        if let cell = view as? UITableViewCell { path = (around.first { $0 is UITableView } as? UITableView)?.indexPath(for: cell) }
        if let cell = view as? UICollectionViewCell {
            path = (around.first { $0 is UICollectionView } as? UICollectionView)?.indexPath(for: cell)
        }
        return path.map { CellIndexPath(section: $0.section, item: $0.item) }
    }

    @MainActor private static func delegate(of list: UIScrollView) -> AnyObject? {
        if let table = list as? UITableView { return table.delegate }
        return (list as? UICollectionView)?.delegate
    }

    @MainActor private static func cell(in list: UIScrollView, at path: IndexPath) -> UIView? {
        if let table = list as? UITableView { return table.cellForRow(at: path) }
        return (list as? UICollectionView)?.cellForItem(at: path)
    }

    @MainActor private static func actionSender(_ sender: AnyObject?) -> ActionSender {
        if sender is UIBarItem { return .barItem }
        return (sender as? UIView).map { .view(kind(of: $0)) } ?? .other
    }

    @MainActor private static func actionEvent(_ event: UIEvent?) -> ActionEvent {
        guard let event else { return .noEvent }
        let ended = event.type == .touches && event.allTouches?.contains { $0.phase == .ended } == true
        return ended ? .touchEnded : .otherEvent
    }
}
#endif
