package import SpoorModel

/// What the glue reads of one live view for a snapshot.
package struct ViewFields: Sendable {
    package var typeNames: [String]
    package var kind: ViewKind = .plain
    package var accessibilityIdentifier: String?
    package var elementID: String?
    package var text: String?
    package var isHidden = false
    package var ignoresAutoCapture = false
    package var customProperties: Properties = [:]

    package init(
        typeNames: [String],
        kind: ViewKind = .plain,
        accessibilityIdentifier: String? = nil,
        elementID: String? = nil,
        text: String? = nil,
        isHidden: Bool = false,
        ignoresAutoCapture: Bool = false,
        customProperties: Properties = [:]
    ) {
        self.typeNames = typeNames
        self.kind = kind
        self.accessibilityIdentifier = accessibilityIdentifier
        self.elementID = elementID
        self.text = text
        self.isHidden = isHidden
        self.ignoresAutoCapture = ignoresAutoCapture
        self.customProperties = customProperties
    }
}

/// How the glue reads live views (`UIView`s): each read is one property, and ``ViewSnapshots`` decides which
/// views are read. The reads run on the main actor, inside a hook.
package struct ViewReader<View: AnyObject>: Sendable {
    /// The superview.
    package var superview: @MainActor @Sendable (View) -> View?
    /// The subviews, in order.
    package var subviews: @MainActor @Sendable (View) -> [View]
    /// The view's class chain, as ``CaptureRules/typeNames(isa:reported:)`` gives it.
    package var typeNames: @MainActor @Sendable (View) -> [String]
    /// Everything else a snapshot holds of the view, given its class chain.
    package var fields: @MainActor @Sendable (View, _ typeNames: [String]) -> ViewFields
    /// The index path of `cell` in `list` (a table or collection view), if it is one of its cells.
    package var indexPath: @MainActor @Sendable (_ cell: View, _ list: View) -> CellIndexPath?
    /// The page of the controller the view is the root view of, if any.
    package var page: @MainActor @Sendable (View) -> PageNode?

    package init(
        superview: @escaping @MainActor @Sendable (View) -> View?,
        subviews: @escaping @MainActor @Sendable (View) -> [View],
        typeNames: @escaping @MainActor @Sendable (View) -> [String],
        fields: @escaping @MainActor @Sendable (View, _ typeNames: [String]) -> ViewFields,
        indexPath: @escaping @MainActor @Sendable (_ cell: View, _ list: View) -> CellIndexPath?,
        page: @escaping @MainActor @Sendable (View) -> PageNode?
    ) {
        self.superview = superview
        self.subviews = subviews
        self.typeNames = typeNames
        self.fields = fields
        self.indexPath = indexPath
        self.page = page
    }
}

/// Snapshots of live views, read through a ``ViewReader``: the clicked view with the content its click needs,
/// under its superviews up to the window.
package enum ViewSnapshots {
    /// `view` with its content, under its superviews (each with its type, index among same-type siblings,
    /// index path when it is a cell of a list above it, and page), up to the window.
    @MainActor
    package static func node<View: AnyObject>(of view: View, reader: ViewReader<View>) -> ViewNode {
        var chain = [view]
        while chain.count < CaptureRules.ancestorLimit, let superview = reader.superview(chain[chain.count - 1]) {
            chain.append(superview)
        }
        let names = chain.map(reader.typeNames)
        let kinds = names.map { CaptureRules.kind(of: ViewNode(typeNames: $0)) }
        var parent: ViewNode?
        for index in chain.indices.reversed() {
            let fields = reader.fields(chain[index], names[index])
            // A cell's index path comes from the nearest list above it, not only its direct superview.
            let list = kinds[index] == .cell ? chain.indices.first { $0 > index && kinds[$0] == .list } : nil
            var siblingIndex = 0
            if index + 1 < chain.count {
                let siblings = reader.subviews(chain[index + 1])
                if let position = siblings.firstIndex(where: { $0 === chain[index] }) {
                    siblingIndex = CaptureRules.siblingIndex(at: position, among: siblings.map { reader.typeNames($0).first ?? "" })
                }
            }
            var budget = index == 0 ? CaptureRules.contentViewBudget : 0
            parent = ViewNode(
                fields, siblingIndex: siblingIndex, indexPath: list.flatMap { reader.indexPath(chain[index], chain[$0]) },
                parent: parent, children: index == 0 ? contentChildren(of: chain[index], fields, reader, &budget) : [],
                page: reader.page(chain[index]))
        }
        return parent ?? ViewNode(typeNames: [])
    }

    /// `view` with its content and no superview: a title view.
    @MainActor
    package static func content<View: AnyObject>(of view: View, reader: ViewReader<View>) -> ViewNode {
        var budget = CaptureRules.contentViewBudget
        return contentNode(of: view, fields: reader.fields(view, reader.typeNames(view)), reader, &budget)
    }

    @MainActor
    private static func contentNode<View: AnyObject>(
        of view: View, fields: ViewFields, _ reader: ViewReader<View>, _ budget: inout Int
    ) -> ViewNode {
        ViewNode(fields, siblingIndex: 0, indexPath: nil, parent: nil,
                 children: contentChildren(of: view, fields, reader, &budget), page: nil)
    }

    /// The subviews content is read from, only when the view has no content of its own; hidden and opted-out
    /// subtrees are not read, and at most `budget` views are.
    @MainActor
    private static func contentChildren<View: AnyObject>(
        of view: View, _ fields: ViewFields, _ reader: ViewReader<View>, _ budget: inout Int
    ) -> [ViewNode] {
        guard CaptureRules.contentComesFromSubviews(kind: CaptureRules.kind(of: ViewNode(fields)), text: fields.text)
        else { return [] }
        var children: [ViewNode] = []
        for subview in reader.subviews(view) {
            guard budget > 0 else { break }
            budget -= 1
            let child = reader.fields(subview, reader.typeNames(subview))
            guard CaptureRules.contributesContent(isHidden: child.isHidden, ignoresAutoCapture: child.ignoresAutoCapture)
            else { continue }
            children.append(contentNode(of: subview, fields: child, reader, &budget))
        }
        return children
    }
}

/// How the glue reads live view controllers. The reads run on the main actor, inside a hook.
package struct PageReader<Controller: AnyObject>: Sendable {
    /// The controller's class chain, as ``CaptureRules/typeNames(isa:reported:)`` gives it.
    package var typeNames: @MainActor @Sendable (Controller) -> [String]
    /// The parent controller.
    package var parent: @MainActor @Sendable (Controller) -> Controller?
    /// The navigation item's title and title view; asked only when ``CaptureRules/showsNavigationItem(parentTypeNames:)``.
    package var navigationItem: @MainActor @Sendable (Controller) -> (title: String?, titleView: ViewNode?)
    /// The controller's `title`.
    package var title: @MainActor @Sendable (Controller) -> String?
    /// What the controller says about its page, when it adopts ``SpoorPage``.
    package var custom: @MainActor @Sendable (Controller) -> CustomPage?
    /// Whether the controller's class adopts ``SpoorIgnoresAutoCapture``.
    package var ignoresAutoCapture: @MainActor @Sendable (Controller) -> Bool
    /// The child a container shows, of the kind ``CaptureRules/shownChild(ofContainer:)`` says.
    package var child: @MainActor @Sendable (Controller, CaptureRules.ShownChild) -> Controller?

    package init(
        typeNames: @escaping @MainActor @Sendable (Controller) -> [String],
        parent: @escaping @MainActor @Sendable (Controller) -> Controller?,
        navigationItem: @escaping @MainActor @Sendable (Controller) -> (title: String?, titleView: ViewNode?),
        title: @escaping @MainActor @Sendable (Controller) -> String?,
        custom: @escaping @MainActor @Sendable (Controller) -> CustomPage?,
        ignoresAutoCapture: @escaping @MainActor @Sendable (Controller) -> Bool,
        child: @escaping @MainActor @Sendable (Controller, CaptureRules.ShownChild) -> Controller?
    ) {
        self.typeNames = typeNames
        self.parent = parent
        self.navigationItem = navigationItem
        self.title = title
        self.custom = custom
        self.ignoresAutoCapture = ignoresAutoCapture
        self.child = child
    }
}

/// Snapshots of live view controllers, read through a ``PageReader``.
package enum PageSnapshots {
    /// The snapshot of `controller`, with the child it shows when it is a container, followed down.
    @MainActor
    package static func node<Controller: AnyObject>(of controller: Controller, reader: PageReader<Controller>, depth: Int = 0) -> PageNode {
        let typeNames = reader.typeNames(controller)
        let parentTypeNames = reader.parent(controller).map(reader.typeNames)
        let item = CaptureRules.showsNavigationItem(parentTypeNames: parentTypeNames) ? reader.navigationItem(controller) : nil
        let shown = CaptureRules.shownChild(ofContainer: typeNames)
        // Bounded, so a container that (wrongly) shows itself cannot loop.
        let child = shown == .none || depth >= 8 ? nil : reader.child(controller, shown)
        return PageNode(
            typeNames: typeNames, parentTypeNames: parentTypeNames, titleView: item?.titleView,
            navigationItemTitle: item?.title, title: reader.title(controller), custom: reader.custom(controller),
            ignoresAutoCapture: reader.ignoresAutoCapture(controller),
            shownChild: child.map { node(of: $0, reader: reader, depth: depth + 1) })
    }
}

extension ViewNode {
    /// A node of `fields`, placed in its tree.
    package convenience init(
        _ fields: ViewFields, siblingIndex: Int = 0, indexPath: CellIndexPath? = nil, parent: ViewNode? = nil,
        children: [ViewNode] = [], page: PageNode? = nil
    ) {
        self.init(
            typeNames: fields.typeNames, kind: fields.kind, accessibilityIdentifier: fields.accessibilityIdentifier,
            elementID: fields.elementID, text: fields.text, isHidden: fields.isHidden, siblingIndex: siblingIndex,
            indexPath: indexPath, parent: parent, children: children, page: page,
            ignoresAutoCapture: fields.ignoresAutoCapture, customProperties: fields.customProperties)
    }
}
