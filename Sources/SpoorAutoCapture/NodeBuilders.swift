public import Logging
public import SpoorModel
internal import SpoorSystem

/// A SwiftUI control whose taps `.spoorClick(_:control:id:properties:)` reports.
public enum SpoorControl: Sendable, Hashable {
    /// A `Button`.
    case button
    /// A `Toggle`, with its value before the tap: the click reports the value after it.
    case toggle(wasOn: Bool)
    /// A `NavigationLink`.
    case navigationLink
    /// Any view with `onTapGesture`.
    case tapGesture

    /// `$element_type`: the SwiftUI type, with its module as class names have theirs.
    public var typeName: String {
        switch self {
        case .button: "SwiftUI.Button"
        case .toggle: "SwiftUI.Toggle"
        case .navigationLink: "SwiftUI.NavigationLink"
        case .tapGesture: "SwiftUI.TapGesture"
        }
    }
}

extension CaptureRules {
    /// The snapshot of a SwiftUI page: named by the app, so it is a page wherever it is shown.
    public static func swiftUIPage(screenName: String, title: String?, url: String?, properties: Properties) -> PageNode {
        PageNode(
            typeNames: [screenName],
            custom: CustomPage(screenName: screenName, title: title, url: url, properties: properties))
    }

    /// The snapshot of a tapped SwiftUI control on `page` (the nearest `.spoorPage`, if any). SwiftUI views
    /// have no index among siblings, so every control of a type on a page shares one path
    /// (`SwiftUI.View/SwiftUI.Button[0]`) and `$element_id` or `$element_content` tells them apart.
    public static func swiftUIControl(
        _ control: SpoorControl, title: String, id: String?, properties: Properties, page: PageNode?
    ) -> ViewNode {
        let root = ViewNode(typeNames: ["SwiftUI.View"], page: page)
        let kind: ViewKind = if case .toggle(let wasOn) = control { .toggle(isOn: !wasOn) } else { .plain }
        return ViewNode(
            typeNames: [control.typeName], kind: kind, elementID: id, text: title, parent: root,
            customProperties: properties)
    }

    /// The snapshot of a tap on a SwiftUI control, or `nil` when it is no click: the control is disabled (its
    /// tap gesture still sees the tap, but the control does nothing).
    public static func swiftUIClick(
        _ control: SpoorControl, title: String, id: String?, properties: Properties, page: PageNode?, isEnabled: Bool
    ) -> ViewNode? {
        guard isEnabled else { return nil }
        return swiftUIControl(control, title: title, id: id, properties: properties, page: page)
    }

    /// The snapshot of a tapped alert action. The action does not know its alert, so the click goes to the
    /// page shown under the alert.
    public static func alertAction(title: String?) -> ViewNode {
        ViewNode(typeNames: ["UIAlertAction"], text: title, parent: ViewNode(typeNames: ["UIAlertController"]))
    }
}

extension AutoCapture {
    private static let missingEnvironmentWarned = Locked(false)

    /// A SwiftUI modifier found no ``AutoCapture`` in its environment (`.environment(\.spoorAutoCapture, …)`
    /// missing at the root): in debug builds, warns through `logger` once per process; in release builds,
    /// never. Returns whether it warned now.
    @discardableResult
    public static func warnMissingEnvironment(logger: Logger = Logger(label: "spoor.autocapture")) -> Bool {
        #if DEBUG
        guard missingEnvironmentWarned.withLock({ warned in defer { warned = true }; return !warned }) else { return false }
        logger.warning(
            "spoor: a .spoorPage or .spoorClick view has no AutoCapture in its environment; nothing is captured (set .environment(\\.spoorAutoCapture, capture) on the root view)"
        )
        return true
        #else
        return false
        #endif
    }
}
