public import SpoorTracker

/// The rules behind what the UIKit glue reads: class names, which container child is shown, which view
/// carries a value, where a button's text comes from, how far a snapshot goes, what SwiftUI draws. The glue
/// asks these and reads UIKit; fake trees test them on Linux.
extension CaptureRules {
    // MARK: - Class names

    /// An object's class and superclasses, nearest first, starting at the class the object reports
    /// (`[object class]`, as the Sensors SDK's `NSStringFromClass([obj class])`) rather than its runtime class:
    /// key-value observing, RxCocoa and Aspects give an object a subclass of their own and make it report the
    /// original. `isa` is the runtime class chain; when the reported class is not on it (a class that lies),
    /// the runtime chain is kept, without the prefix key-value observing adds.
    public static func typeNames(isa: [String], reported: String) -> [String] {
        if let start = isa.firstIndex(of: reported) { return Array(isa[start...]) }
        return isa.map(className)
    }

    /// Whether a class belongs to SwiftUI: `SwiftUI.…` as Swift names it, or a mangled name in the SwiftUI
    /// module (`_TtC7SwiftUI…`, `_TtGC7SwiftUI…` for generic classes, `_TtCC7SwiftUI…` for nested ones).
    public static func isSwiftUIClass(_ name: String) -> Bool {
        if name.hasPrefix("SwiftUI.") { return true }
        guard name.hasPrefix("_Tt") else { return false }
        return name.dropFirst(3).drop(while: { $0.isUppercase && $0.isASCII }).hasPrefix("7SwiftUI")
    }

    /// Whether `view` is drawn by SwiftUI: it or a view around it is SwiftUI's (a hosting view, a list's
    /// collection view, the platform view under a `Toggle`). UIKit's hooks capture nothing there: a SwiftUI
    /// control says itself what it is with `.spoorClick`, and would otherwise count twice (a `Toggle`'s switch)
    /// or as an empty cell (a `List` row).
    public static func isInsideSwiftUI(_ view: any CapturedView) -> Bool {
        var current: (any CapturedView)? = view
        while let node = current {
            if node.typeNames.contains(where: isSwiftUIClass) { return true }
            current = node.parentView
        }
        return false
    }

    /// Whether the glue hooks a list delegate's class for cell selection: not SwiftUI's own delegates, whose
    /// rows are SwiftUI's to report.
    public static func hooksListDelegate(_ typeNames: [String]) -> Bool {
        !typeNames.contains(where: isSwiftUIClass)
    }

    // MARK: - What the glue reads

    /// Which child a container shows, by its class chain.
    public enum ShownChild: Sendable, Hashable {
        /// A navigation controller's top view controller.
        case navigationTop
        /// A tab bar controller's selected view controller.
        case selectedTab
        /// A page view controller's first (current) view controller.
        case currentPage
        /// Not a container that shows one child.
        case none
    }

    /// The child `typeNames`' controller shows, for containers and their subclasses.
    public static func shownChild(ofContainer typeNames: [String]) -> ShownChild {
        if typeNames.contains("UINavigationController") { return .navigationTop }
        if typeNames.contains("UITabBarController") { return .selectedTab }
        if typeNames.contains("UIPageViewController") { return .currentPage }
        return .none
    }

    /// Whether a controller's navigation item is read for its title: only when its parent is a navigation
    /// controller, which has made the item to show it. Reading `navigationItem` elsewhere creates one.
    public static func showsNavigationItem(parentTypeNames: [String]?) -> Bool {
        parentTypeNames?.contains("UINavigationController") ?? false
    }

    /// Controls whose click carries their value, by class chain.
    public enum ValueControl: Sendable, Hashable {
        case toggle, stepper, slider, pageControl, segmented
    }

    /// The value control `typeNames` is, if any (an app's subclass of one is one).
    public static func valueControl(_ typeNames: [String]) -> ValueControl? {
        let controls: [(String, ValueControl)] = [
            ("UISwitch", .toggle), ("UIStepper", .stepper), ("UISlider", .slider), ("UIPageControl", .pageControl),
            ("UISegmentedControl", .segmented),
        ]
        return controls.first { typeNames.contains($0.0) }?.1
    }

    /// A button's text: its current title (which, unlike `titleLabel`, creates no label on an image-only
    /// button), else its configuration's title.
    public static func buttonText(currentTitle: String?, configurationTitle: String?) -> String? {
        trimmed(currentTitle) ?? trimmed(configurationTitle)
    }

    /// A view's index among its superview's subviews of the same type: `position` is its place among
    /// all of them, `siblingTypes` their types in order.
    public static func siblingIndex(at position: Int, among siblingTypes: [String]) -> Int {
        guard siblingTypes.indices.contains(position) else { return 0 }
        return siblingTypes[..<position].filter { $0 == siblingTypes[position] }.count
    }

    // MARK: - How far a snapshot goes

    /// The most views a click's content snapshot reads below the clicked view: content is the first texts
    /// found, and a tap on a large container must not copy its whole subtree.
    public static let contentViewBudget = 64

    /// How many superviews a snapshot follows up: deeper than any real hierarchy, so a cycle cannot loop.
    public static let ancestorLimit = 256

    /// Whether a view's content comes from its subviews, so a snapshot must read them: a view with no text of
    /// its own that is not a value control or text entry (see ``elementContent(_:)``).
    public static func contentComesFromSubviews(kind: ViewKind, text: String?) -> Bool {
        switch kind {
        case .plain, .list, .cell: trimmed(text) == nil
        case .toggle, .stepper, .slider, .pageControl, .segmented, .textInput: false
        }
    }

    /// Whether a subview contributes content, so a snapshot reads it and what is inside: visible and not
    /// opted out.
    public static func contributesContent(isHidden: Bool, ignoresAutoCapture: Bool) -> Bool {
        !isHidden && !ignoresAutoCapture
    }
}

extension UIKitHook {
    /// The hooks `options` asks for, leaving out those whose events `autoTrack` drops: pages for `.pages`
    /// (and `.childPages`) when `$AppViewScreen`, `$AppPageLeave` or `$AppClick` is kept (clicks without a
    /// page of their own name the visible one); the click hooks for `.clicks` when `$AppClick` is kept.
    public static func needed(for options: AutoCaptureOptions, keeping autoTrack: AutoTrackOptions) -> [UIKitHook] {
        var hooks: [UIKitHook] = []
        if !options.isDisjoint(with: [.pages, .childPages]), !autoTrack.isDisjoint(with: [.appViewScreen, .appPageLeave, .appClick]) {
            hooks.append(.pages)
        }
        if options.contains(.clicks), autoTrack.contains(.appClick) { hooks += [.actions, .cellSelection, .gestures] }
        return hooks
    }
}
