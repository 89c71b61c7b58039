/// A snapshot of one view, taken on the main thread by the UIKit glue (or built by hand for things that
/// are not views: alert actions, bar button items, SwiftUI buttons).
public final class ViewNode: CapturedView, @unchecked Sendable {
    // @unchecked: every stored property is a `let` set at init, and the tree is only read afterwards.
    public let typeName: String
    public let accessibilityIdentifier: String?
    public let text: String?
    public let siblingIndex: Int
    public let indexPath: CellIndexPath?
    public let parent: ViewNode?
    public let children: [ViewNode]
    public let page: PageNode?
    public let ignoresAutoCapture: Bool

    /// Creates a node; `parent` is the superview's node, `page` the owning controller's page.
    public init(
        typeName: String, accessibilityIdentifier: String? = nil, text: String? = nil, siblingIndex: Int = 0,
        indexPath: CellIndexPath? = nil, parent: ViewNode? = nil, children: [ViewNode] = [], page: PageNode? = nil,
        ignoresAutoCapture: Bool = false
    ) {
        self.typeName = typeName
        self.accessibilityIdentifier = accessibilityIdentifier
        self.text = text
        self.siblingIndex = siblingIndex
        self.indexPath = indexPath
        self.parent = parent
        self.children = children
        self.page = page
        self.ignoresAutoCapture = ignoresAutoCapture
    }

    public var parentView: (any CapturedView)? { parent }
    public var childViews: [any CapturedView] { children }
    public var owningPage: (any CapturedPage)? { page }
}

/// A snapshot of one page, taken on the main thread.
public struct PageNode: CapturedPage, Sendable {
    public var typeName: String
    public var navigationTitle: String?
    public var titleViewText: String?
    public var custom: CustomPage?
    public var ignoresAutoCapture: Bool

    /// Creates a page snapshot.
    public init(
        typeName: String, navigationTitle: String? = nil, titleViewText: String? = nil, custom: CustomPage? = nil,
        ignoresAutoCapture: Bool = false
    ) {
        self.typeName = typeName
        self.navigationTitle = navigationTitle
        self.titleViewText = titleViewText
        self.custom = custom
        self.ignoresAutoCapture = ignoresAutoCapture
    }

    public var customPage: (any SpoorPage)? { custom }
}

/// A ``SpoorPage`` copied out of a controller (or given to `.spoorPage(...)`).
public struct CustomPage: SpoorPage, Sendable, Hashable {
    public var spoorScreenName: String?
    public var spoorTitle: String?
    public var spoorURL: String?

    /// Copies what `page` says about itself.
    public init(_ page: any SpoorPage) {
        self.init(screenName: page.spoorScreenName, title: page.spoorTitle, url: page.spoorURL)
    }

    /// Creates a custom page description.
    public init(screenName: String? = nil, title: String? = nil, url: String? = nil) {
        spoorScreenName = screenName
        spoorTitle = title
        spoorURL = url
    }
}
