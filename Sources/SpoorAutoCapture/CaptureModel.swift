import Foundation
public import SpoorTracker

/// A view as UIKit shows it, for click capture. The UIKit glue builds ``ViewNode`` values; tests build
/// fake trees of their own.
public protocol CapturedView {
    /// The view's type name, such as `UIButton` (`$element_type`).
    var typeName: String { get }
    /// The accessibility identifier (`$element_id`).
    var accessibilityIdentifier: String? { get }
    /// The title or label text: a button's title, a label's text, an alert action's title.
    var text: String? { get }
    /// Index among the parent's subviews of the same type; 0 when alone.
    var siblingIndex: Int { get }
    /// For a cell: its index path in the table or collection view.
    var indexPath: CellIndexPath? { get }
    /// The superview; `nil` at the page's root view.
    var parentView: (any CapturedView)? { get }
    /// The subviews, for a cell's content text.
    var childViews: [any CapturedView] { get }
    /// The view controller whose page the view is on, when it is known at this level.
    var owningPage: (any CapturedPage)? { get }
    /// The view opted out of click capture (it and everything inside it).
    var ignoresAutoCapture: Bool { get }
}

/// A page as a view controller shows it.
public protocol CapturedPage {
    /// The view controller's type name: the page's `$screen_name` unless ``SpoorPage`` says otherwise.
    var typeName: String { get }
    /// `navigationItem.title` (or the controller's `title`).
    var navigationTitle: String? { get }
    /// The text of a label used as `navigationItem.titleView`.
    var titleViewText: String? { get }
    /// The controller's own description of the page, when it conforms to ``SpoorPage``.
    var customPage: (any SpoorPage)? { get }
    /// The controller opted out of page capture.
    var ignoresAutoCapture: Bool { get }
}

/// Adopted by a view controller (or a SwiftUI page) that names its page itself.
public protocol SpoorPage {
    /// `$screen_name`; `nil` keeps the type name.
    var spoorScreenName: String? { get }
    /// `$title`; `nil` keeps the navigation title rules.
    var spoorTitle: String? { get }
    /// `$url`; `nil` gives an empty URL.
    var spoorURL: String? { get }
}

extension SpoorPage {
    public var spoorScreenName: String? { nil }
    public var spoorTitle: String? { nil }
    public var spoorURL: String? { nil }
}

/// A cell's place in a table or collection view.
public struct CellIndexPath: Sendable, Hashable {
    /// The section.
    public var section: Int
    /// The row or item.
    public var item: Int

    /// Creates an index path.
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }
}

/// The pure rules that turn a captured view or page into event properties.
public enum CaptureRules {
    /// Container and system controllers that are never pages of their own (their children are).
    public static let systemPageTypes: Set<String> = [
        "UINavigationController", "UITabBarController", "UIPageViewController", "UISplitViewController",
        "UIInputWindowController", "UIAlertController", "UIEditingOverlayViewController",
        "UICompatibilityInputViewController", "UISystemKeyboardDockController", "UIPredictionViewController",
        "UIKeyboardCandidateGridCollectionViewController", "UIApplicationRotationFollowingController",
        "UIApplicationRotationFollowingControllerNoTouches", "_UIRemoteInputViewController",
        "UIHostingController",
    ]

    /// Text content joins the texts of a cell's subviews with this separator.
    public static let contentSeparator = "-"

    /// `$element_type`: the view's type name.
    public static func elementType(_ view: any CapturedView) -> String { view.typeName }

    /// `$element_content`: the view's own text, trimmed; otherwise the texts inside it, depth first,
    /// joined with `-` (a cell's labels).
    public static func elementContent(_ view: any CapturedView) -> String {
        if let own = trimmed(view.text) { return own }
        var texts: [String] = []
        collectTexts(view.childViews, into: &texts)
        return texts.joined(separator: contentSeparator)
    }

    /// `$element_id`: the accessibility identifier, or empty.
    public static func elementID(_ view: any CapturedView) -> String { trimmed(view.accessibilityIdentifier) ?? "" }

    /// `$element_path`: type names from the page's root view down to `view`, each but the root with its
    /// index among same-type siblings (`UIView/UIStackView[0]/UIButton[2]`). Cells get `[-]` instead, so
    /// every row of a list shares one path and `$element_position` tells them apart.
    public static func elementPath(_ view: any CapturedView) -> String {
        var components: [String] = []
        var current: (any CapturedView)? = view
        while let node = current {
            if node.parentView == nil {
                components.append(node.typeName)
            } else if node.indexPath != nil {
                components.append("\(node.typeName)[-]")
            } else {
                components.append("\(node.typeName)[\(node.siblingIndex)]")
            }
            current = node.parentView
        }
        return components.reversed().joined(separator: "/")
    }

    /// `$element_position`: the nearest cell's `section:item`, for views in lists; `nil` elsewhere.
    public static func elementPosition(_ view: any CapturedView) -> String? {
        var current: (any CapturedView)? = view
        while let node = current {
            if let path = node.indexPath { return "\(path.section):\(path.item)" }
            current = node.parentView
        }
        return nil
    }

    /// Whether `view` or a view around it opted out.
    public static func isOptedOut(_ view: any CapturedView) -> Bool {
        var current: (any CapturedView)? = view
        while let node = current {
            if node.ignoresAutoCapture { return true }
            current = node.parentView
        }
        return false
    }

    /// The page `view` is on: the nearest owning page up the tree.
    public static func page(of view: any CapturedView) -> (any CapturedPage)? {
        var current: (any CapturedView)? = view
        while let node = current {
            if let page = node.owningPage { return page }
            current = node.parentView
        }
        return nil
    }

    /// `$screen_name`: the ``SpoorPage`` name, else the type name.
    public static func screenName(_ page: any CapturedPage) -> String {
        trimmed(page.customPage?.spoorScreenName) ?? page.typeName
    }

    /// `$title`: the ``SpoorPage`` title, else the navigation title, else the title view's text, else empty.
    public static func title(_ page: any CapturedPage) -> String {
        trimmed(page.customPage?.spoorTitle) ?? trimmed(page.navigationTitle) ?? trimmed(page.titleViewText) ?? ""
    }

    /// The page's ``PageInfo``, or `nil` for containers and system controllers (never pages). A page that
    /// opted out is returned with `ignoresAutoTrack`, so the tracker's ignore rules decide in one place.
    public static func pageInfo(_ page: any CapturedPage) -> PageInfo? {
        guard page.customPage != nil || !systemPageTypes.contains(page.typeName) else { return nil }
        return PageInfo(
            screenName: screenName(page), title: title(page), url: trimmed(page.customPage?.spoorURL) ?? "",
            ignoresAutoTrack: page.ignoresAutoCapture
        )
    }

    /// The `$AppClick` for a tap on `view`, or `nil` when the view opted out. Ignore lists by element type
    /// and id, and the 100 ms debounce, are the tracker's (`Tracker.trackClick`), not repeated here.
    public static func click(on view: any CapturedView) -> AppClick? {
        guard !isOptedOut(view) else { return nil }
        return AppClick(
            elementType: elementType(view), elementContent: elementContent(view), elementID: elementID(view),
            elementPosition: elementPosition(view), elementPath: elementPath(view),
            page: page(of: view).flatMap(pageInfo)
        )
    }

    /// A switch's content: `checked` or `unchecked` after the tap.
    public static func switchText(isOn: Bool) -> String { isOn ? "checked" : "unchecked" }

    /// A segmented control's content: the selected segment's title, else its index.
    public static func segmentText(titles: [String?], selected: Int) -> String? {
        guard titles.indices.contains(selected) else { return nil }
        return trimmed(titles[selected]) ?? String(selected)
    }

    private static func collectTexts(_ views: [any CapturedView], into texts: inout [String]) {
        for child in views {
            if let text = trimmed(child.text) { texts.append(text) } else { collectTexts(child.childViews, into: &texts) }
        }
    }

    private static func trimmed(_ text: String?) -> String? {
        guard let text else { return nil }
        let result = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return result.isEmpty ? nil : result
    }
}

/// Adopted by a view or view controller class to opt out of auto-capture: no clicks on the view or inside
/// it, no page for the controller (the glue turns it into ``CapturedView/ignoresAutoCapture``).
public protocol SpoorIgnoresAutoCapture: AnyObject {}
