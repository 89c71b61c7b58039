import SpoorAutoCapture

/// A mutable fake of a UIKit view, so tests can build trees top-down with real parent links.
final class FakeView: CapturedView {
    let typeName: String
    var accessibilityIdentifier: String?
    var text: String?
    var siblingIndex = 0
    var indexPath: CellIndexPath?
    var parent: FakeView?  // strong, unlike UIKit: a test may hold only the leaf
    var children: [FakeView] = []
    var page: FakePage?
    var ignoresAutoCapture = false

    init(_ typeName: String, id: String? = nil, text: String? = nil) {
        self.typeName = typeName
        accessibilityIdentifier = id
        self.text = text
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

struct FakePage: CapturedPage {
    var typeName: String
    var navigationTitle: String?
    var titleViewText: String?
    var customPage: (any SpoorPage)?
    var ignoresAutoCapture = false
}

struct ProductPage: SpoorPage {
    var spoorTitle: String? { "Product 42" }
    var spoorURL: String? { "app://product/42" }
}
