// UIKit glue, built only with an Apple SDK: scripts/typecheck-apple-glue type-checks it against a stand-in
// SDK in `make test`, and docs/verifying-on-apple.md runs it on a device. Each hook is one call to its body
// (HookBodies.swift) with readers of what UIKit holds; every decision is the model's, tested on Linux.
#if canImport(UIKit) && (os(iOS) || targetEnvironment(macCatalyst))
import Foundation
import ObjectiveC
internal import SpoorSystem
public import SpoorTracker
public import UIKit

extension UIView: SpoorViewOptions {}

extension AutoCapture {
    /// Installs the UIKit hooks `autoTrack.capture` asks for, leaving out those whose events `autoTrack.events` drops
    /// (``UIKitHook/needed(for:keeping:)``), and makes this the capture they report to. Call on the main
    /// thread, early. Hooks stay for the process: a later call switches the capture and adds the hooks it
    /// needs. Nothing it reaches is unavailable to app extensions.
    @MainActor public func installUIKitHooks() {
        makeInstalled()
        for hook in UIKitHook.needed(for: options, keeping: tracker.configuration.autoTrack.events)
        where UIKitHooks.installed.withLock({ $0.insert(hook).inserted }) {
            UIKitHooks.install(hook)
        }
    }
}

extension Tracker {
    /// `$AppClick` for `view`, for taps the hooks cannot see (see ``AutoCapture/trackClick(on:)``).
    @MainActor public func trackClick(on view: UIView) {
        AutoCapture.capture(for: self).trackClick(on: ViewSnapshots.node(of: view, reader: UIKitHooks.views))
    }

    /// Shows `controller` as a page whatever the page rules say. It leaves when it disappears (seen by the
    /// hooks of any capture of this tracker) or is freed.
    @MainActor public func trackPage(_ controller: UIViewController) {
        AutoCapture.capture(for: self).trackPage(PageSnapshots.node(of: controller, reader: UIKitHooks.pages), object: controller)
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
    func discard(_ implementation: IMP) { imp_removeBlock(implementation) }
}

/// Receives the actions of the app's tap and long-press recognizers, ahead of the app's own targets.
private final class GestureObserver: NSObject, Sendable {
    static let shared = GestureObserver()
    @objc func recognized(_ recognizer: UIGestureRecognizer) {
        AutoCapture.gestureHook(recognizer: recognizer, isMainThread: Thread.isMainThread, reader: UIKitHooks.gestures)
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
        switch hook {
        case .pages: installPages()
        case .actions: installActions()
        case .cellSelection: installCellSelection()
        case .gestures: installGestures()
        }
    }

    private static func installPages() {
        typealias Fn = @convention(c) (UIViewController, Selector, Bool) -> Void
        for (selector, appeared) in [(#selector(UIViewController.viewDidAppear(_:)), true), (#selector(UIViewController.viewDidDisappear(_:)), false)] {
            hook(UIViewController.self, selector) { original in
                return { controller, animated in
                    AutoCapture.viewAppearanceHook(appeared: appeared, controller: controller, isMainThread: Thread.isMainThread, reader: pages) {
                        unsafeBitCast(original(), to: Fn.self)(controller, selector, animated)
                    }
                } as @convention(block) (UIViewController, Bool) -> Void
            }
        }
    }

    private static func installActions() {
        typealias SendFn = @convention(c) (UIApplication, Selector, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool
        let send = NSSelectorFromString("sendAction:to:from:forEvent:")  // by name: nothing unavailable to extensions
        hook(UIApplication.self, send) { original in
            return { application, action, target, sender, event in
                AutoCapture.sendActionHook(sender: sender, event: event, isMainThread: Thread.isMainThread, reader: actions) {
                    unsafeBitCast(original(), to: SendFn.self)(application, send, action, target, sender, event)
                }
            } as @convention(block) (UIApplication, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool
        }
        typealias HandlerFn = @convention(c) (UIControl, Selector, UIAction) -> Void
        let handler = #selector(UIControl.sendAction(_:))
        hook(UIControl.self, handler) { original in
            return { control, action in
                AutoCapture.actionHandlerHook(control: control as AnyObject, isMainThread: Thread.isMainThread, reader: actions) {
                    unsafeBitCast(original(), to: HandlerFn.self)(control, handler, action)
                }
            } as @convention(block) (UIControl, UIAction) -> Void
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
                    // The runtime class: the one whose method runs, hooked once per class.
                    AutoCapture.listDelegateHook(
                        typeNames: classNames(delegateClass),
                        respondsToSelection: { (delegate as? any NSObjectProtocol)?.responds(to: selection) == true },
                        hook: { hookSelection(delegateClass, selection) })
                } as @convention(block) (UIScrollView, AnyObject?) -> Void
            }
        }
    }

    private static func hookSelection(_ delegateClass: AnyClass, _ selector: Selector) -> HookResult {
        typealias Fn = @convention(c) (AnyObject, Selector, UIScrollView, NSIndexPath) -> Void
        return hook(delegateClass, selector) { original in
            return { receiver, list, path in
                let index = path as IndexPath
                AutoCapture.cellSelectionHook(
                    receiver: receiver, list: list, at: CellIndexPath(section: index.section, item: index.item),
                    isMainThread: Thread.isMainThread, reader: lists
                ) { unsafeBitCast(original(), to: Fn.self)(receiver, selector, list, path) }
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
                guard let recognizer = result?.takeUnretainedValue() else { return result }
                let pair = MainThreadValue((target, action))
                AutoCapture.recognizerInitHook(hasTargetAndAction: target != nil && action != nil, isMainThread: Thread.isMainThread) {
                    guard let target = pair.value.0, let action = pair.value.1 else { return }
                    recognizer.removeTarget(target, action: action)
                    recognizer.addTarget(target, action: action)
                }
                return result
            } as @convention(block) (Unmanaged<UIGestureRecognizer>, AnyObject?, Selector?) -> Unmanaged<UIGestureRecognizer>?
        }
        for (selector, adds) in [(#selector(UIGestureRecognizer.addTarget(_:action:)), true), (#selector(UIGestureRecognizer.removeTarget(_:action:)), false)] {
            hook(UIGestureRecognizer.self, selector) { original in
                return { recognizer, target, action in
                    let call = unsafeBitCast(original(), to: TargetFn.self), name = action.map(NSStringFromSelector)
                    guard adds else {
                        return AutoCapture.removeTargetHook(recognizer: recognizer, target: target, action: name) { call(recognizer, selector, target, action) }
                    }
                    AutoCapture.addTargetHook(
                        recognizer: recognizer, typeNames: typeNames(of: recognizer), target: target, action: name,
                        isObserver: target === GestureObserver.shared,
                        addObserver: { call(recognizer, selector, GestureObserver.shared, #selector(GestureObserver.recognized(_:))) },
                        original: { call(recognizer, selector, target, action) })
                } as @convention(block) (UIGestureRecognizer, AnyObject?, Selector?) -> Void
            }
        }
    }

    // MARK: - Readers

    /// `cls` and its superclasses, nearest first.
    static func classNames(_ cls: AnyClass) -> [String] {
        sequence(first: cls, next: { class_getSuperclass($0) }).map { NSStringFromClass($0) }
    }

    /// `object`'s class chain from the class it reports (`-class`, which Swift does not call by name).
    static func typeNames(of object: AnyObject) -> [String] {
        let reported: AnyClass? = (object as? NSObject)?.perform(NSSelectorFromString("class"))?.takeUnretainedValue() as? AnyClass
        return CaptureRules.typeNames(isa: classNames(object_getClass(object) ?? type(of: object)), reported: NSStringFromClass(reported ?? type(of: object)))
    }

    /// What `view` is: the value control its classes say, with its value, else what the rules derive from them.
    @MainActor static func kind(of view: UIView, _ names: [String]) -> ViewKind {
        let value: ViewKind? = switch CaptureRules.valueControl(names) {
        case .toggle: (view as? UISwitch).map { .toggle(isOn: $0.isOn) }
        case .stepper: (view as? UIStepper).map { .stepper(value: $0.value) }
        case .slider: (view as? UISlider).map { .slider(value: Double($0.value), isTracking: $0.isTracking) }
        case .pageControl: (view as? UIPageControl).map { .pageControl(current: $0.currentPage) }
        case .segmented: (view as? UISegmentedControl).map { s in .segmented(selected: s.selectedSegmentIndex, titles: (0..<s.numberOfSegments).map { s.titleForSegment(at: $0) }) }
        case nil: nil
        }
        return CaptureRules.kind(of: ViewNode(typeNames: names, kind: value ?? .plain))
    }

    static let views: ViewReader<UIView> = .init(
        superview: { $0.superview }, subviews: { $0.subviews }, typeNames: { typeNames(of: $0) },
        fields: { view, names in
            ViewFields(
                typeNames: names, kind: kind(of: view, names), accessibilityIdentifier: view.accessibilityIdentifier,
                elementID: view.spoorElementID,
                text: (view as? UILabel)?.text ?? (view as? UIButton).flatMap { CaptureRules.buttonText(currentTitle: $0.currentTitle, configurationTitle: $0.configuration?.title) },
                isHidden: view.isHidden, ignoresAutoCapture: view.spoorIgnored || view is any SpoorIgnoresAutoCapture,
                customProperties: view.spoorProperties)
        },
        indexPath: { cell, list in
            let path = (cell as? UITableViewCell).flatMap { (list as? UITableView)?.indexPath(for: $0) }
                ?? (cell as? UICollectionViewCell).flatMap { (list as? UICollectionView)?.indexPath(for: $0) }
            return path.map { CellIndexPath(section: $0.section, item: $0.item) }
        },
        page: { ($0.next as? UIViewController).map { PageSnapshots.node(of: $0, reader: pages) } })

    static let pages: PageReader<UIViewController> = .init(
        typeNames: { typeNames(of: $0) }, parent: { $0.parent },
        navigationItem: { ($0.navigationItem.title, $0.navigationItem.titleView.map { ViewSnapshots.content(of: $0, reader: views) }) },
        title: { $0.title }, custom: { ($0 as? any SpoorPage).map(CustomPage.init) },
        ignoresAutoCapture: { $0 is any SpoorIgnoresAutoCapture },
        child: { controller, shown in
            switch shown {
            case .navigationTop: (controller as? UINavigationController)?.topViewController
            case .selectedTab: (controller as? UITabBarController)?.selectedViewController
            case .currentPage: (controller as? UIPageViewController)?.viewControllers?.first
            case .none: nil
            }
        })

    static let actions: ActionReader<AnyObject, UIEvent> = .init(
        sender: { sender in (sender is UIBarItem, (sender as? UIView).map { kind(of: $0, typeNames(of: $0)) }) },
        event: { event in (event.type == .touches, event.allTouches?.contains { $0.phase == .ended } == true) },
        node: { ($0 as? UIView).map { ViewSnapshots.node(of: $0, reader: views) } })

    static let lists: ListReader<UIScrollView> = .init(
        delegate: { ($0 as? UITableView)?.delegate ?? ($0 as? UICollectionView)?.delegate },
        cell: { list, path in
            let index = IndexPath(item: path.item, section: path.section)
            let cell: UIView? = (list as? UITableView)?.cellForRow(at: index) ?? (list as? UICollectionView)?.cellForItem(at: index)
            return cell.map { ViewSnapshots.node(of: $0, reader: views) }
        },
        layout: { $0.layoutIfNeeded() })

    static let gestures: GestureReader<UIGestureRecognizer> = .init(
        phase: { recognizer in
            switch recognizer.state {
            case .ended: .ended
            case .cancelled: .cancelled
            default: .other
            }
        },
        view: { $0.view.map { ViewSnapshots.node(of: $0, reader: views) } })
}
#endif
