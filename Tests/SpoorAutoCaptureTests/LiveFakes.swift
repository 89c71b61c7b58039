import SpoorAutoCapture

/// A fake of a live `UIView`, read through a ``ViewReader`` as the glue reads UIKit: it counts the reads, so
/// tests see what a snapshot touches.
final class LiveView {
    let typeNames: [String]
    var kind: ViewKind
    var text: String?
    var id: String?
    var isHidden = false
    var ignored = false
    weak var superview: LiveView?
    var subviews: [LiveView] = []
    var page: PageNode?
    /// For a cell: the list it belongs to and its index path there.
    var cell: (list: LiveView, path: CellIndexPath)?
    private(set) var fieldReads = 0
    private(set) var subviewReads = 0

    init(_ type: String, kind: ViewKind = .plain, id: String? = nil, text: String? = nil) {
        typeNames = Chain.view(type)
        self.kind = kind
        self.id = id
        self.text = text
    }

    @discardableResult
    func add(_ subview: LiveView) -> LiveView {
        subview.superview = self
        subviews.append(subview)
        return subview
    }

    /// Views read, here and below.
    var readsBelow: Int { subviews.reduce(0) { $0 + $1.fieldReads + $1.readsBelow } }

    static let reader = ViewReader<LiveView>(
        superview: { $0.superview },
        subviews: { view in
            view.subviewReads += 1
            return view.subviews
        },
        typeNames: { $0.typeNames },
        fields: { view, names in
            view.fieldReads += 1
            return ViewFields(
                typeNames: names, kind: view.kind, accessibilityIdentifier: view.id, text: view.text,
                isHidden: view.isHidden, ignoresAutoCapture: view.ignored)
        },
        indexPath: { cell, list in cell.cell?.list === list ? cell.cell?.path : nil },
        page: { $0.page })
}

/// A fake of a live `UIViewController`, read through a ``PageReader``; it counts navigation item reads
/// (reading `navigationItem` creates one).
final class LiveController {
    let typeNames: [String]
    var title: String?
    var itemTitle: String?
    weak var parent: LiveController?
    var shown: LiveController?
    var custom: CustomPage?
    private(set) var navigationItemReads = 0

    init(_ typeNames: [String], title: String? = nil, itemTitle: String? = nil) {
        self.typeNames = typeNames
        self.title = title
        self.itemTitle = itemTitle
    }

    /// Makes `child` this container's child, and the one it shows.
    @discardableResult
    func show(_ child: LiveController) -> LiveController {
        child.parent = self
        shown = child
        return child
    }

    static let reader = PageReader<LiveController>(
        typeNames: { $0.typeNames }, parent: { $0.parent },
        navigationItem: { controller in
            controller.navigationItemReads += 1
            return (controller.itemTitle, nil)
        },
        title: { $0.title }, custom: { $0.custom }, ignoresAutoCapture: { _ in false },
        child: { controller, _ in controller.shown })
}
