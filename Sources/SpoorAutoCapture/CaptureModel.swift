public import SpoorModel

/// A view as the UI framework shows it, for click capture. The UIKit glue builds ``ViewNode`` snapshots;
/// tests build fake trees of their own.
public protocol CapturedView {
    /// The view's class and its superclasses, nearest first, as `NSStringFromClass` names them
    /// (`MyApp.FancyButton`, `UIButton`, `UIControl`, `UIView`, …). The first is the view's type.
    var typeNames: [String] { get }
    /// What the view is, as far as the glue knows it; `.plain` leaves it to ``CaptureRules/kind(of:)``.
    var kind: ViewKind { get }
    /// The accessibility identifier.
    var accessibilityIdentifier: String? { get }
    /// The element id the app set for analytics (``SpoorViewOptions/spoorElementID``); it wins over the
    /// accessibility identifier.
    var elementID: String? { get }
    /// The view's own text: a label's text, a button's title. `nil` for views whose text is their subviews'.
    var text: String? { get }
    /// The view is hidden itself (`isHidden`).
    var isHidden: Bool { get }
    /// Index among the superview's subviews of the same type; 0 when alone.
    var siblingIndex: Int { get }
    /// For a cell: its index path in the table or collection view.
    var indexPath: CellIndexPath? { get }
    /// The superview; `nil` at the top of the snapshot.
    var parentView: (any CapturedView)? { get }
    /// The subviews, for the view's content.
    var childViews: [any CapturedView] { get }
    /// The view controller this view is the root view of, if any.
    var owningPage: (any CapturedPage)? { get }
    /// The view opted out of click capture (``SpoorViewOptions/spoorIgnored``, or its class adopts ``SpoorIgnoresAutoCapture``):
    /// no clicks on it or on anything inside it.
    var ignoresAutoCapture: Bool { get }
    /// The properties the app attached to this view (``SpoorViewOptions/spoorProperties``), added to its clicks.
    var customProperties: Properties { get }
}

extension CapturedView {
    /// The view's own type name: the first of ``typeNames``.
    public var typeName: String { typeNames.first ?? "" }
}

/// What a view is, as far as click capture cares. The glue sets the kinds that carry a value (and text
/// entry, which it must know before any snapshot); ``CaptureRules/kind(of:)`` derives the rest from class
/// names. Every rule that depends on them lives in ``CaptureRules``.
public enum ViewKind: Sendable, Hashable {
    /// Any other view: buttons, labels, image views, custom controls.
    case plain
    /// A switch, on or off after the tap.
    case toggle(isOn: Bool)
    /// A stepper and its value after the tap.
    case stepper(value: Double)
    /// A segmented control: the selected segment (negative for none) and every segment's title.
    case segmented(selected: Int, titles: [String?])
    /// A page control and its current page.
    case pageControl(current: Int)
    /// A slider, its value, and whether a finger is still dragging it.
    case slider(value: Double, isTracking: Bool)
    /// Text entry: a text field, text view or search bar. Never clicked, and never content: what users type
    /// stays on the device.
    case textInput
    /// A table or collection view.
    case list
    /// A table or collection view cell.
    case cell
}

/// A page as a view controller shows it.
public protocol CapturedPage {
    /// The controller's class and its superclasses, nearest first, as `NSStringFromClass` names them
    /// (`MyApp.CartViewController`, `UIViewController`, …). The first is the page's `$screen_name` unless
    /// ``SpoorPage`` says otherwise.
    var typeNames: [String] { get }
    /// The parent controller's class and superclasses; `nil` when the controller has no parent.
    var parentTypeNames: [String]? { get }
    /// `navigationItem.titleView`, whose content is the title when it has any.
    var titleView: (any CapturedView)? { get }
    /// `navigationItem.title`.
    var navigationItemTitle: String? { get }
    /// The controller's `title`.
    var title: String? { get }
    /// The controller's own description of the page, copied from its ``SpoorPage`` conformance.
    var customPage: CustomPage? { get }
    /// The controller opted out (its class adopts ``SpoorIgnoresAutoCapture``): no page events, and no clicks
    /// on anything inside it.
    var ignoresAutoCapture: Bool { get }
    /// For a container: the child it shows (a navigation controller's top, a tab bar controller's selected).
    var shownChild: (any CapturedPage)? { get }
}

/// Adopted by a view controller that describes its page itself. Read on the main actor, when the page
/// appears and when a click lands on it; ``CustomPage`` holds what it said.
@MainActor
public protocol SpoorPage {
    /// `$screen_name`; `nil` keeps the class name.
    var spoorScreenName: String? { get }
    /// `$title`; `nil` keeps the title rules (title view, navigation item, controller title).
    var spoorTitle: String? { get }
    /// `$url`; `nil` gives the screen name, so the next page's `$referrer` names this one.
    var spoorURL: String? { get }
    /// Properties added to the page's `$AppViewScreen`, `$AppPageLeave` and to clicks on it.
    var spoorProperties: Properties { get }
}

extension SpoorPage {
    public var spoorScreenName: String? { nil }
    public var spoorTitle: String? { nil }
    public var spoorURL: String? { nil }
    public var spoorProperties: Properties { [:] }
}

/// Adopted by a table or collection view's delegate to add properties to the clicks on its cells. Asked on
/// the main actor, only for a selection that is a click.
@MainActor
public protocol SpoorListDelegate: AnyObject {
    /// Properties for a click on the cell at `indexPath` of `list` (the `UITableView` or `UICollectionView`).
    func spoorProperties(forCellAt indexPath: CellIndexPath, in list: AnyObject) -> Properties
}

/// Adopted by a view or view controller class to opt out of auto-capture: no clicks on the view or inside
/// it; for a controller, no page events and no clicks inside it.
public protocol SpoorIgnoresAutoCapture: AnyObject {}

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

/// How an action reached `sendAction`: who sent it.
public enum ActionSender: Sendable, Hashable {
    /// A view (a control) of this kind.
    case view(ViewKind)
    /// A bar button item or tab bar item. The bar's own button sent the tap first, so this is never a click.
    case barItem
    /// Anything else.
    case other

    /// Classifies a sender: a bar item, else a view of `viewKind` (`nil` when the sender is not a view).
    public static func classify(isBarItem: Bool, viewKind: ViewKind?) -> ActionSender {
        if isBarItem { return .barItem }
        return viewKind.map { .view($0) } ?? .other
    }
}

/// The event an action was sent with.
public enum ActionEvent: Sendable, Hashable {
    /// A touch event with a touch that ended: a tap finished.
    case touchEnded
    /// Another event: a touch that began or moved, a key press.
    case otherEvent
    /// No event: the app called `sendActions(for:)` itself.
    case noEvent
    /// A `UIAction` the control ran (`UIControl.sendAction(_:)`): UIKit passes no event, and runs it for the
    /// control's primary action, or when the app calls `sendActions(for:)`.
    case actionHandler

    /// Classifies what `sendAction` was given: whether there was an event, whether it was a touch event,
    /// and whether one of its touches had ended.
    public static func classify(hasEvent: Bool, isTouches: Bool, aTouchEnded: Bool) -> ActionEvent {
        guard hasEvent else { return .noEvent }
        return isTouches && aTouchEnded ? .touchEnded : .otherEvent
    }
}

/// A gesture recognizer's state when it called its targets, as far as clicks care.
public enum GesturePhase: Sendable, Hashable {
    /// The gesture ended: a tap was recognized, a long press lifted.
    case ended
    /// The gesture was cancelled after it began: a long press held long enough, then taken over.
    case cancelled
    /// Began or changed: not over yet.
    case other
}
