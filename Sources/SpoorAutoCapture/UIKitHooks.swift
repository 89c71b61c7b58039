// UIKit glue, built only with an Apple SDK (docs/verifying-on-apple.md proves it on a device). Each hook
// snapshots what UIKit hands it and calls AutoCapture, where every rule lives and is tested on Linux.
#if canImport(UIKit) && (os(iOS) || targetEnvironment(macCatalyst))
import Foundation
import ObjectiveC
internal import SpoorSystem
public import SpoorTracker
public import UIKit

extension UIView: SpoorViewOptions {}

extension AutoCapture {
    /// Installs the UIKit hooks `autoCapture` asks for (``UIKitHook/needed(for:)``) and makes this the capture
    /// they report to. Call on the main thread, early. Hooks stay for the process: a later call switches the
    /// capture and adds the hooks it needs. Nothing it reaches is unavailable to app extensions.
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
    /// hooks installed for this tracker) or is freed.
    @MainActor public func trackPage(_ controller: UIViewController) {
        AutoCapture.capture(for: self).trackPage(UIKitHooks.page(controller), object: controller)
    }
}

/// One selector on the Objective-C runtime, for ``MethodHooks``.
private struct ObjCMethod: MethodTable {
    let selector: Selector
    func implementation(in cls: AnyClass) -> IMP? { class_getInstanceMethod(cls, selector).map(method_getImplementation) }
    func superclass(of cls: AnyClass) -> AnyClass? { class_getSuperclass(cls) }
    func add(_ implementation: IMP, to cls: AnyClass) -> Bool {
        class_addMethod(cls, selector, implementation, class_getInstanceMethod(cls, selector).flatMap(method_getTypeEncoding))
    }
    func replace(in cls: AnyClass, with implementation: IMP) {
        class_replaceMethod(cls, selector, implementation, class_getInstanceMethod(cls, selector).flatMap(method_getTypeEncoding))
    }
}

/// Receives the actions of the app's tap and long-press recognizers, ahead of the app's own targets.
private final class GestureObserver: NSObject, Sendable {
    static let shared = GestureObserver()
    @objc func recognized(_ recognizer: UIGestureRecognizer) {
        AutoCapture.onMainThread(.gestures, otherwise: {}) { capture in
            capture.gestureRecognized(recognizer, ended: recognizer.state == .ended) { recognizer.view.map(UIKitHooks.node) }
        }
    }
}

enum UIKitHooks {
    static let installed = Locked<Set<UIKitHook>>([])
    private static let hooks = Locked(MethodHooks())

    /// Hooks `selector` on `cls` with the block `makeBlock` builds around a function giving the original.
    @discardableResult
    private static func hook(_ cls: AnyClass, _ selector: Selector, _ makeBlock: (_ original: @escaping () -> IMP) -> Any) -> HookResult {
        hooks.withLock { hooks in
            hooks.hook(cls, method: NSStringFromSelector(selector), in: ObjCMethod(selector: selector)) { imp_implementationWithBlock(makeBlock($0)) }
        }
    }

    static func install(_ hook: UIKitHook) {
        let installers: [UIKitHook: () -> Void] = [
            .pages: installPages, .actions: installActions, .cellSelection: installCellSelection, .gestures: installGestures,
        ]
        installers[hook]?()
    }

    // The blocks get values that are not Sendable; each goes to the main actor only inside onMainThread,
    // which checked that this is the main thread, for the synchronous call there: hence MainThreadValue.

    private static func installPages() {
        typealias Fn = @convention(c) (UIViewController, Selector, Bool) -> Void
        for (selector, appeared) in [(#selector(UIViewController.viewDidAppear(_:)), true), (#selector(UIViewController.viewDidDisappear(_:)), false)] {
            hook(UIViewController.self, selector) { original in
                return { controller, animated in
                    unsafeBitCast(original(), to: Fn.self)(controller, selector, animated)
                    AutoCapture.onMainThread(.pages, otherwise: {}) { appeared ? $0.pageAppeared(page(controller), object: controller) : $0.pageDisappeared(object: controller) }
                } as @convention(block) (UIViewController, Bool) -> Void
            }
        }
    }

    private static func installActions() {
        typealias Fn = @convention(c) (UIApplication, Selector, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool
        let selector = NSSelectorFromString("sendAction:to:from:forEvent:")  // by name: nothing unavailable to extensions
        hook(UIApplication.self, selector) { original in
            return { application, action, target, sender, event in
                let raw = MainThreadValue((sender: sender, event: event))
                let send = MainThreadValue { unsafeBitCast(original(), to: Fn.self)(application, selector, action, target, sender, event) }
                return AutoCapture.onMainThread(.actions, otherwise: send.value) { capture in
                    let (sender, event) = raw.value
                    let view = sender as? UIView, touches = event?.type == .touches ? event?.allTouches : nil
                    return capture.actionSent(
                        by: sender is UIBarItem ? .barItem : view.map { .view(kind(of: $0)) } ?? .other,
                        event: event == nil ? .noEvent : touches?.contains { $0.phase == .ended } == true ? .touchEnded : .otherEvent,
                        view: { view.map(node) }, perform: send.value)
                }
            } as @convention(block) (UIApplication, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool
        }
    }

    private static func installCellSelection() {
        typealias SetFn = @convention(c) (UIScrollView, Selector, AnyObject?) -> Void
        let setDelegate = #selector(setter: UITableView.delegate)
        for (list, selection): (AnyClass, Selector) in [
            (UITableView.self, #selector(UITableViewDelegate.tableView(_:didSelectRowAt:))),
            (UICollectionView.self, #selector(UICollectionViewDelegate.collectionView(_:didSelectItemAt:))),
        ] {
            hook(list, setDelegate) { original in
                return { view, delegate in
                    unsafeBitCast(original(), to: SetFn.self)(view, setDelegate, delegate)
                    guard let delegate, let delegateClass = object_getClass(delegate) else { return }
                    let result = hookSelection(delegateClass, selection)  // per delegate class, once
                    AutoCapture.installed?.listDelegateSet(
                        ofType: NSStringFromClass(delegateClass), hook: result,
                        respondsToSelection: (delegate as? any NSObjectProtocol)?.responds(to: selection) == true)
                } as @convention(block) (UIScrollView, AnyObject?) -> Void
            }
        }
    }

    private static func hookSelection(_ delegateClass: AnyClass, _ selector: Selector) -> HookResult {
        typealias Fn = @convention(c) (AnyObject, Selector, UIScrollView, NSIndexPath) -> Void
        return hook(delegateClass, selector) { original in
            return { receiver, list, path in
                let bound = MainThreadValue((
                    receiver: receiver, select: { unsafeBitCast(original(), to: Fn.self)(receiver, selector, list, path) }
                ))
                let index = path as IndexPath
                AutoCapture.onMainThread(.cellSelection, otherwise: bound.value.select) { capture in
                    let (receiver, select) = bound.value
                    let cell = (list as? UITableView)?.cellForRow(at: index) as UIView? ?? (list as? UICollectionView)?.cellForItem(at: index)
                    capture.cellSelected(
                        in: list, at: CellIndexPath(section: index.section, item: index.item), receiver: receiver,
                        listDelegate: list.delegate, cell: { cell.map(node) }, perform: select)
                }
            } as @convention(block) (AnyObject, UIScrollView, NSIndexPath) -> Void
        }
    }

    private static func installGestures() {
        typealias InitFn = @convention(c) (Unmanaged<UIGestureRecognizer>, Selector, AnyObject?, Selector?) -> Unmanaged<UIGestureRecognizer>?
        typealias TargetFn = @convention(c) (UIGestureRecognizer, Selector, AnyObject?, Selector?) -> Void
        let initializer = #selector(UIGestureRecognizer.init(target:action:))
        hook(UIGestureRecognizer.self, initializer) { original in
            // Unmanaged: an initializer consumes its receiver and returns its result retained; only the original acts on them.
            return { this, target, action in
                let result = unsafeBitCast(original(), to: InitFn.self)(this, initializer, target, action)
                guard let recognizer = result?.takeUnretainedValue(), let target, let action else { return result }
                // The target init added, put back through the hooked addTarget, which puts the observer first.
                let pair = MainThreadValue((target, action))
                AutoCapture.onMainThread(.gestures, otherwise: {}) { _ in
                    recognizer.removeTarget(pair.value.0, action: pair.value.1)
                    recognizer.addTarget(pair.value.0, action: pair.value.1)
                }
                return result
            } as @convention(block) (Unmanaged<UIGestureRecognizer>, AnyObject?, Selector?) -> Unmanaged<UIGestureRecognizer>?
        }
        for (selector, adds) in [(#selector(UIGestureRecognizer.addTarget(_:action:)), true), (#selector(UIGestureRecognizer.removeTarget(_:action:)), false)] {
            hook(UIGestureRecognizer.self, selector) { original in
                return { recognizer, target, action in
                    let call = unsafeBitCast(original(), to: TargetFn.self), capture = AutoCapture.installed
                    let name = action.map(NSStringFromSelector)
                    if !adds {
                        capture?.gestureTargetRemoved(from: recognizer, target: target, action: name)
                    } else if target !== GestureObserver.shared,
                        capture?.gestureTargetAdded(to: recognizer, typeNames: classNames(type(of: recognizer)), target: target, action: name) == true
                    {  // the observer first, so the click is recorded before the app's action runs
                        call(recognizer, selector, GestureObserver.shared, #selector(GestureObserver.recognized(_:)))
                    }
                    call(recognizer, selector, target, action)
                } as @convention(block) (UIGestureRecognizer, AnyObject?, Selector?) -> Void
            }
        }
    }

    // MARK: - Snapshots

    static func classNames(_ cls: AnyClass) -> [String] {
        sequence(first: cls, next: { class_getSuperclass($0) }).map { CaptureRules.className(NSStringFromClass($0)) }
    }

    @MainActor static func page(_ controller: UIViewController) -> PageNode {
        let shown = (controller as? UINavigationController)?.topViewController ?? (controller as? UITabBarController)?.selectedViewController
        return PageNode(
            typeNames: classNames(type(of: controller)), parentTypeNames: controller.parent.map { classNames(type(of: $0)) },
            titleView: controller.navigationItem.titleView.map { snapshot($0, parent: nil, content: true) },
            navigationItemTitle: controller.navigationItem.title, title: controller.title,
            custom: (controller as? any SpoorPage).map(CustomPage.init), ignoresAutoCapture: controller is any SpoorIgnoresAutoCapture,
            shownChild: shown.map(page))
    }

    /// `view` with its content, under its superviews up to the window.
    @MainActor static func node(_ view: UIView) -> ViewNode {
        let ancestors = sequence(first: view, next: { $0.superview }).dropFirst().reversed()
        return snapshot(view, parent: ancestors.reduce(nil) { snapshot($1, parent: $0, content: false) }, content: true)
    }

    @MainActor private static func snapshot(_ view: UIView, parent: ViewNode?, content: Bool) -> ViewNode {
        let list = view.superview
        let text = (view as? UILabel)?.text ?? (view as? UIButton).flatMap { $0.titleLabel?.text ?? $0.configuration?.title }
        let path = (view as? UITableViewCell).flatMap { (list as? UITableView)?.indexPath(for: $0) }
            ?? (view as? UICollectionViewCell).flatMap { (list as? UICollectionView)?.indexPath(for: $0) }
        return ViewNode(
            typeNames: classNames(type(of: view)), kind: kind(of: view), accessibilityIdentifier: view.accessibilityIdentifier,
            elementID: view.spoorElementID, text: content ? text : nil, isHidden: view.isHidden,
            siblingIndex: list?.subviews.filter { type(of: $0) == type(of: view) }.firstIndex { $0 === view } ?? 0,
            indexPath: path.map { CellIndexPath(section: $0.section, item: $0.item) }, parent: parent,
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
        default: .plain  // lists and cells: from their class names
        }
    }
}
#endif
