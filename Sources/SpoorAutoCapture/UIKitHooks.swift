// Apple-only glue: not compiled on Linux, and not compiled by the author (no Apple SDK on the build machine).
// See docs/verifying-on-apple.md. Every hook calls the original implementation first or last, translates
// what UIKit hands it into a snapshot and calls AutoCapture; the rules live in CaptureModel.swift.
#if canImport(UIKit)
import ObjectiveC
public import UIKit

extension AutoCapture {
    /// Installs the UIKit hooks (once per process; later calls only switch the tracker they report to).
    /// Call from the main thread, early, such as in `application(_:didFinishLaunchingWithOptions:)`.
    @MainActor public func installUIKitHooks() {
        UIKitHooks.capture = self
        UIKitHooks.installOnce()
    }
}

@MainActor enum UIKitHooks {
    static var capture: AutoCapture?
    private static var installed = false
    /// Methods already replaced, so a class seen twice (or sharing an inherited method) is hooked once.
    private static var hooked: Set<Method> = []

    static func installOnce() {
        guard !installed else { return }
        installed = true
        hookPages()
        hookSendAction()
        hookBackButton()
        hookListDelegates()
        hookGestures()
        hookAlertActions()
    }

    /// Replaces `method` with `makeIMP(original)`, once per method.
    private static func replace(_ method: Method, _ makeIMP: (IMP) -> IMP) {
        guard hooked.insert(method).inserted else { return }
        let original = method_getImplementation(method)
        method_setImplementation(method, makeIMP(original))
    }

    // MARK: Pages

    private static func hookPages() {
        typealias Fn = @convention(c) (UIViewController, Selector, Bool) -> Void
        for (name, appeared) in [("viewDidAppear:", true), ("viewDidDisappear:", false)] {
            let selector = NSSelectorFromString(name)
            guard let method = class_getInstanceMethod(UIViewController.self, selector) else { continue }
            replace(method) { imp in
                let original = unsafeBitCast(imp, to: Fn.self)
                let block: @convention(block) (UIViewController, Bool) -> Void = { controller, animated in
                    original(controller, selector, animated)
                    MainActor.assumeIsolated {
                        let id = String(describing: ObjectIdentifier(controller))
                        if appeared {
                            capture?.pageAppeared(page(controller), id: id)
                        } else {
                            capture?.pageDisappeared(id: id)
                        }
                    }
                }
                return imp_implementationWithBlock(block)
            }
        }
    }

    static func page(_ controller: UIViewController) -> PageNode {
        PageNode(
            typeName: String(describing: type(of: controller)),
            navigationTitle: controller.navigationItem.title ?? controller.title,
            titleViewText: (controller.navigationItem.titleView as? UILabel)?.text,
            custom: (controller as? any SpoorPage).map(CustomPage.init),
            ignoresAutoCapture: controller is any SpoorIgnoresAutoCapture
        )
    }

    // MARK: Controls and bar button items

    private static func hookSendAction() {
        typealias Fn = @convention(c) (UIApplication, Selector, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool
        let selector = NSSelectorFromString("sendAction:to:from:forEvent:")
        guard let method = class_getInstanceMethod(UIApplication.self, selector) else { return }
        replace(method) { imp in
            let original = unsafeBitCast(imp, to: Fn.self)
            let block: @convention(block) (UIApplication, Selector, AnyObject?, AnyObject?, UIEvent?) -> Bool = {
                application, action, target, sender, event in
                let handled = original(application, selector, action, target, sender, event)
                MainActor.assumeIsolated {
                    // A control reports on touch up (or without touches, e.g. a switch's value change);
                    // a control with two targets reports twice, which the tracker's 100 ms debounce merges.
                    let touchEnded = event?.allTouches?.contains { $0.phase == .ended } ?? true
                    if let item = sender as? UIBarButtonItem {
                        capture?.clicked(barButtonNode(item))
                    } else if let control = sender as? UIControl, touchEnded, !(control is UITextField) {
                        capture?.clicked(node(control))
                    }
                }
                return handled
            }
            return imp_implementationWithBlock(block)
        }
    }

    private static func barButtonNode(_ item: UIBarButtonItem) -> ViewNode {
        let shown = topController().map(page)
        return ViewNode(
            typeName: "UIBarButtonItem", accessibilityIdentifier: item.accessibilityIdentifier,
            text: item.title ?? item.accessibilityLabel, parent: ViewNode(typeName: "UINavigationBar", page: shown)
        )
    }

    // MARK: Navigation back button

    private static func hookBackButton() {
        typealias Fn = @convention(c) (UINavigationController, Selector, UINavigationBar, UINavigationItem) -> Bool
        let selector = NSSelectorFromString("navigationBar:shouldPopItem:")
        guard let method = class_getInstanceMethod(UINavigationController.self, selector) else { return }
        replace(method) { imp in
            let original = unsafeBitCast(imp, to: Fn.self)
            let block: @convention(block) (UINavigationController, UINavigationBar, UINavigationItem) -> Bool = {
                navigation, bar, item in
                MainActor.assumeIsolated {
                    // Reported on the page being left, as the seed describes; the text is the back title.
                    let shown = navigation.topViewController.map(page)
                    let back = bar.backItem
                    let text = back?.backButtonTitle ?? back?.title ?? "Back"
                    let parent = ViewNode(typeName: "UINavigationBar", page: shown)
                    capture?.clicked(ViewNode(typeName: "UINavigationBackButton", text: text, parent: parent))
                }
                return original(navigation, selector, bar, item)
            }
            return imp_implementationWithBlock(block)
        }
    }

    // MARK: Table and collection selection

    private static func hookListDelegates() {
        typealias SetFn = @convention(c) (UIScrollView, Selector, AnyObject?) -> Void
        let setDelegate = NSSelectorFromString("setDelegate:")
        for listClass in [UITableView.self, UICollectionView.self] as [AnyClass] {
            guard let method = class_getInstanceMethod(listClass, setDelegate) else { continue }
            replace(method) { imp in
                let original = unsafeBitCast(imp, to: SetFn.self)
                let block: @convention(block) (UIScrollView, AnyObject?) -> Void = { list, delegate in
                    original(list, setDelegate, delegate)
                    guard let delegate else { return }
                    MainActor.assumeIsolated { hookSelection(in: type(of: delegate)) }
                }
                return imp_implementationWithBlock(block)
            }
        }
    }

    private static func hookSelection(in delegateClass: AnyClass) {
        typealias Fn = @convention(c) (AnyObject, Selector, UIScrollView, NSIndexPath) -> Void
        let selectors = ["tableView:didSelectRowAtIndexPath:", "collectionView:didSelectItemAtIndexPath:"]
        for name in selectors {
            let selector = NSSelectorFromString(name)
            guard let method = class_getInstanceMethod(delegateClass, selector) else { continue }
            replace(method) { imp in
                let original = unsafeBitCast(imp, to: Fn.self)
                let block: @convention(block) (AnyObject, UIScrollView, NSIndexPath) -> Void = { delegate, list, path in
                    MainActor.assumeIsolated {
                        let indexPath = path as IndexPath
                        let cell = (list as? UITableView)?.cellForRow(at: indexPath)
                            ?? (list as? UICollectionView)?.cellForItem(at: indexPath)
                        if let cell { capture?.clicked(node(cell)) }
                    }
                    original(delegate, selector, list, path)
                }
                return imp_implementationWithBlock(block)
            }
        }
    }

    // MARK: Gestures

    /// Receives the taps of the app's tap and long-press recognizers, next to their own targets.
    @MainActor final class GestureObserver: NSObject {
        static let shared = GestureObserver()

        @objc func recognized(_ recognizer: UIGestureRecognizer) {
            guard recognizer.state == .ended, let view = recognizer.view else { return }
            capture?.clicked(node(view))
        }
    }

    /// Hooks `addGestureRecognizer(_:)` rather than the recognizer's initializers: replacing an `init`
    /// from Swift would get its ownership rules wrong. Only the public tap and long-press classes count;
    /// UIKit's own recognizers are private subclasses.
    private static func hookGestures() {
        typealias Fn = @convention(c) (UIView, Selector, UIGestureRecognizer) -> Void
        let selector = NSSelectorFromString("addGestureRecognizer:")
        guard let method = class_getInstanceMethod(UIView.self, selector) else { return }
        replace(method) { imp in
            let original = unsafeBitCast(imp, to: Fn.self)
            let block: @convention(block) (UIView, UIGestureRecognizer) -> Void = { view, recognizer in
                original(view, selector, recognizer)
                MainActor.assumeIsolated {
                    let kind = type(of: recognizer)
                    guard kind == UITapGestureRecognizer.self || kind == UILongPressGestureRecognizer.self else { return }
                    // Adding the same target and action twice is a no-op in UIKit, so re-adding is harmless.
                    recognizer.addTarget(GestureObserver.shared, action: #selector(GestureObserver.recognized(_:)))
                }
            }
            return imp_implementationWithBlock(block)
        }
    }

    // MARK: Alert actions

    private static func hookAlertActions() {
        typealias Handler = @convention(block) (UIAlertAction) -> Void
        typealias Fn = @convention(c) (AnyClass, Selector, NSString?, Int, Handler?) -> UIAlertAction
        let selector = NSSelectorFromString("actionWithTitle:style:handler:")
        guard let method = class_getClassMethod(UIAlertAction.self, selector) else { return }
        replace(method) { imp in
            let original = unsafeBitCast(imp, to: Fn.self)
            let block: @convention(block) (AnyClass, NSString?, Int, Handler?) -> UIAlertAction = { cls, title, style, handler in
                let wrapped: Handler = { action in
                    MainActor.assumeIsolated {
                        let alert = ViewNode(typeName: "UIAlertController", page: topController().map(page))
                        capture?.clicked(ViewNode(typeName: "UIAlertAction", text: action.title, parent: alert))
                    }
                    handler?(action)
                }
                return original(cls, selector, title, style, wrapped)
            }
            return imp_implementationWithBlock(block)
        }
    }

    // MARK: Snapshots

    /// A snapshot of `view` and its superviews up to its controller's root view, with the controller's page.
    static func node(_ view: UIView) -> ViewNode {
        var chain: [UIView] = [view]
        while let last = chain.last, let superview = last.superview, owner(of: last)?.viewIfLoaded !== last {
            chain.append(superview)
        }
        var parent: ViewNode?
        for (offset, current) in chain.reversed().enumerated() {
            let isLeaf = offset == chain.count - 1
            let controller = owner(of: current).flatMap { $0.viewIfLoaded === current ? $0 : nil }
            parent = ViewNode(
                typeName: String(describing: type(of: current)),
                accessibilityIdentifier: current.accessibilityIdentifier,
                text: isLeaf ? text(of: current) : nil,
                siblingIndex: current.superview.map { siblings in
                    siblings.subviews.filter { type(of: $0) == type(of: current) }.firstIndex { $0 === current } ?? 0
                } ?? 0,
                indexPath: indexPath(of: current), parent: parent,
                children: isLeaf ? current.subviews.map(textNode) : [], page: controller.map(page),
                ignoresAutoCapture: current is any SpoorIgnoresAutoCapture
            )
        }
        return parent ?? ViewNode(typeName: String(describing: type(of: view)))
    }

    /// Text-only snapshots of a tapped view's subviews (a cell's labels).
    private static func textNode(_ view: UIView) -> ViewNode {
        ViewNode(typeName: String(describing: type(of: view)), text: text(of: view), children: view.subviews.map(textNode))
    }

    private static func text(of view: UIView) -> String? {
        switch view {
        case let button as UIButton: return button.currentTitle
        case let label as UILabel: return label.text
        case let toggle as UISwitch: return CaptureRules.switchText(isOn: toggle.isOn)
        case let segments as UISegmentedControl:
            let titles = (0..<segments.numberOfSegments).map { segments.titleForSegment(at: $0) }
            return CaptureRules.segmentText(titles: titles, selected: segments.selectedSegmentIndex)
        default: return nil  // text fields and other input are never captured
        }
    }

    private static func indexPath(of view: UIView) -> CellIndexPath? {
        var list = view.superview
        while let current = list, !(current is UITableView || current is UICollectionView) { list = current.superview }
        var path: IndexPath?
        if let cell = view as? UITableViewCell, let table = list as? UITableView {
            path = table.indexPath(for: cell)
        } else if let cell = view as? UICollectionViewCell, let collection = list as? UICollectionView {
            path = collection.indexPath(for: cell)
        }
        return path.map { CellIndexPath(section: $0.section, item: $0.item) }
    }

    private static func owner(of view: UIView) -> UIViewController? {
        var responder: UIResponder? = view.next
        while let current = responder, !(current is UIViewController) { responder = current.next }
        return responder as? UIViewController
    }

    /// The controller on top of the key window: the page bar items and alerts are reported on.
    private static func topController() -> UIViewController? {
        let windows = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }.flatMap(\.windows)
        var top = windows.first(where: \.isKeyWindow)?.rootViewController
        while true {
            if let presented = top?.presentedViewController, !(presented is UIAlertController) {
                top = presented
            } else if let navigation = top as? UINavigationController, let visible = navigation.visibleViewController {
                if visible === top { break }
                top = visible
            } else if let tabs = top as? UITabBarController, let selected = tabs.selectedViewController {
                top = selected
            } else {
                break
            }
        }
        return top
    }
}
#endif
