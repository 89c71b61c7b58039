public import SpoorModel

/// A snapshot of one view, taken on the main thread by the glue (or built for things that are not views:
/// alert actions, SwiftUI controls).
public final class ViewNode: CapturedView, @unchecked Sendable {
    // @unchecked: every stored property is a `let` set at init, and the tree is only read afterwards.
    public let typeNames: [String]
    public let kind: ViewKind
    public let accessibilityIdentifier: String?
    public let elementID: String?
    public let text: String?
    public let isHidden: Bool
    public let siblingIndex: Int
    public let indexPath: CellIndexPath?
    public let parent: ViewNode?
    public let children: [ViewNode]
    public let page: PageNode?
    public let ignoresAutoCapture: Bool
    public let customProperties: Properties

    /// Creates a node; `parent` is the superview's node, `page` the controller this view is the root view of.
    public init(
        typeNames: [String], kind: ViewKind = .plain, accessibilityIdentifier: String? = nil, elementID: String? = nil,
        text: String? = nil, isHidden: Bool = false, siblingIndex: Int = 0, indexPath: CellIndexPath? = nil,
        parent: ViewNode? = nil, children: [ViewNode] = [], page: PageNode? = nil, ignoresAutoCapture: Bool = false,
        customProperties: Properties = [:]
    ) {
        self.typeNames = typeNames
        self.kind = kind
        self.accessibilityIdentifier = accessibilityIdentifier
        self.elementID = elementID
        self.text = text
        self.isHidden = isHidden
        self.siblingIndex = siblingIndex
        self.indexPath = indexPath
        self.parent = parent
        self.children = children
        self.page = page
        self.ignoresAutoCapture = ignoresAutoCapture
        self.customProperties = customProperties
    }

    public var parentView: (any CapturedView)? { parent }
    public var childViews: [any CapturedView] { children }
    public var owningPage: (any CapturedPage)? { page }
}

/// A snapshot of one view controller, taken on the main thread.
public final class PageNode: CapturedPage, Sendable {
    public let typeNames: [String]
    public let parentTypeNames: [String]?
    public let titleViewNode: ViewNode?
    public let navigationItemTitle: String?
    public let title: String?
    public let custom: CustomPage?
    public let ignoresAutoCapture: Bool
    public let shownChildNode: PageNode?

    /// Creates a page snapshot.
    public init(
        typeNames: [String], parentTypeNames: [String]? = nil, titleView: ViewNode? = nil,
        navigationItemTitle: String? = nil, title: String? = nil, custom: CustomPage? = nil,
        ignoresAutoCapture: Bool = false, shownChild: PageNode? = nil
    ) {
        self.typeNames = typeNames
        self.parentTypeNames = parentTypeNames
        titleViewNode = titleView
        self.navigationItemTitle = navigationItemTitle
        self.title = title
        self.custom = custom
        self.ignoresAutoCapture = ignoresAutoCapture
        shownChildNode = shownChild
    }

    public var titleView: (any CapturedView)? { titleViewNode }
    public var customPage: CustomPage? { custom }
    public var shownChild: (any CapturedPage)? { shownChildNode }
}

/// What a ``SpoorPage`` says about its page, copied out of the controller on the main actor (or given to
/// `.spoorPage(...)`).
public struct CustomPage: Sendable, Hashable {
    /// `$screen_name`; `nil` keeps the class name.
    public var spoorScreenName: String?
    /// `$title`; `nil` keeps the title rules.
    public var spoorTitle: String?
    /// `$url`; `nil` gives the screen name.
    public var spoorURL: String?
    /// Properties added to the page's events and to clicks on it.
    public var spoorProperties: Properties

    /// Copies what `page` says about itself.
    @MainActor
    public init(_ page: any SpoorPage) {
        self.init(
            screenName: page.spoorScreenName, title: page.spoorTitle, url: page.spoorURL,
            properties: page.spoorProperties)
    }

    /// Creates a custom page description.
    public init(screenName: String? = nil, title: String? = nil, url: String? = nil, properties: Properties = [:]) {
        spoorScreenName = screenName
        spoorTitle = title
        spoorURL = url
        spoorProperties = properties
    }
}
