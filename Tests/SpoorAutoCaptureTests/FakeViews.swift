import SpoorAutoCapture
import SpoorModel

/// A mutable fake of a UIKit view, so tests can build trees top-down with real parent links.
final class FakeView: CapturedView {
    var typeNames: [String]
    var kind: ViewKind
    var accessibilityIdentifier: String?
    var elementID: String?
    var text: String?
    var isHidden = false
    var siblingIndex = 0
    var indexPath: CellIndexPath?
    var parent: FakeView?  // strong, unlike UIKit: a test may hold only the leaf
    var children: [FakeView] = []
    var page: FakePage?
    var ignoresAutoCapture = false
    var customProperties: Properties = [:]

    /// A view of class `typeNames[0]`, whose superclasses follow.
    init(_ typeNames: [String], kind: ViewKind = .plain, id: String? = nil, text: String? = nil) {
        self.typeNames = typeNames
        self.kind = kind
        accessibilityIdentifier = id
        self.text = text
    }

    /// A view of class `type`, with the superclasses UIKit gives it.
    convenience init(_ type: String, kind: ViewKind = .plain, id: String? = nil, text: String? = nil) {
        self.init(Chain.view(type), kind: kind, id: id, text: text)
    }

    /// Adds `child` as the last subview, with its index among same-type siblings, as UIKit orders them.
    @discardableResult
    func add(_ child: FakeView) -> FakeView {
        child.siblingIndex = children.filter { $0.typeName == child.typeName }.count
        child.parent = self
        children.append(child)
        return child
    }

    var parentView: (any CapturedView)? { parent }
    var childViews: [any CapturedView] { children }
    var owningPage: (any CapturedPage)? { page }
}

/// A fake view controller snapshot.
struct FakePage: CapturedPage {
    var typeNames: [String]
    var parentTypeNames: [String]?
    var titleView: (any CapturedView)?
    var navigationItemTitle: String?
    var title: String?
    var customPage: CustomPage?
    var ignoresAutoCapture = false
    var shownChild: (any CapturedPage)?

    init(
        _ typeNames: [String], parent: [String]? = nil, titleView: (any CapturedView)? = nil,
        navigationItemTitle: String? = nil, title: String? = nil, customPage: CustomPage? = nil,
        ignoresAutoCapture: Bool = false, shownChild: (any CapturedPage)? = nil
    ) {
        self.typeNames = typeNames
        parentTypeNames = parent
        self.titleView = titleView
        self.navigationItemTitle = navigationItemTitle
        self.title = title
        self.customPage = customPage
        self.ignoresAutoCapture = ignoresAutoCapture
        self.shownChild = shownChild
    }
}

/// Stands for a view controller instance: the identity a page is held by, weakly. Tests drop it to free it,
/// and keep the ones that must stay alive with `withExtendedLifetime`, as Swift may free a local after its
/// last use.
final class FakeController {}

/// What a product page's controller says about itself.
let productPage = CustomPage(title: "Product 42", url: "app://product/42", properties: ["product_id": "42"])

/// Common chains, as `NSStringFromClass` gives them.
enum Chain {
    static let controller = ["UIViewController", "UIResponder", "NSObject"]
    static let navigation = ["UINavigationController", "UIViewController", "UIResponder", "NSObject"]
    static let tabs = ["UITabBarController", "UIViewController", "UIResponder", "NSObject"]
    static let hosting = ["_TtGC7SwiftUI19UIHostingControllerV5MyApp8RootView_"] + controller
    static func page(_ name: String) -> [String] { [name] + controller }
    /// `name` and its superclasses: UIKit's, for the classes tests use, then `UIView`.
    static func view(_ name: String) -> [String] {
        let parents: [String: [String]] = [
            "UIControl": ["UIButton", "UISwitch", "UISlider", "UIStepper", "UISegmentedControl", "UIPageControl",
                          "UITextField", "_UIButtonBarButton", "UITabBarButton"],
            "UIScrollView": ["UITableView", "UICollectionView", "UITextView"],
        ]
        let parent = parents.first { $0.value.contains(name) }?.key
        return [name] + (parent.map { [$0] } ?? []) + ["UIView", "UIResponder", "NSObject"]
    }
}

extension FakeView {
    /// This view as the glue snapshots it: its content below, its superviews above (without their other
    /// subviews), each with its page.
    func node() -> ViewNode {
        var ancestors: [FakeView] = []
        var current = parent
        while let view = current {
            ancestors.append(view)
            current = view.parent
        }
        let top = ancestors.reversed().reduce(nil as ViewNode?) { parent, view in view.node(parent: parent, content: false) }
        return node(parent: top, content: true)
    }

    private func node(parent: ViewNode?, content: Bool) -> ViewNode {
        ViewNode(
            typeNames: typeNames, kind: kind, accessibilityIdentifier: accessibilityIdentifier, elementID: elementID,
            text: text, isHidden: isHidden, siblingIndex: siblingIndex, indexPath: indexPath, parent: parent,
            children: content ? children.map { $0.node(parent: nil, content: true) } : [], page: page?.node(),
            ignoresAutoCapture: ignoresAutoCapture, customProperties: customProperties)
    }
}

extension FakePage {
    /// This page as the glue snapshots it.
    func node() -> PageNode {
        PageNode(
            typeNames: typeNames, parentTypeNames: parentTypeNames, titleView: (titleView as? FakeView)?.node(),
            navigationItemTitle: navigationItemTitle, title: title, custom: customPage,
            ignoresAutoCapture: ignoresAutoCapture, shownChild: (shownChild as? FakePage)?.node())
    }
}
