import Foundation
public import SpoorModel
public import SpoorTracker

/// The pure rules that turn captured views and pages into event properties, and decide what is a page and
/// what is a click. Everything the glue would otherwise decide lives here, where fake trees test it.
public enum CaptureRules {
    // MARK: - Which controllers are pages

    /// Containers: never pages themselves; the child they show is, and so are their direct children.
    public static let containerTypes: Set<String> = [
        "UINavigationController", "UITabBarController", "UIPageViewController", "UISplitViewController",
    ]

    /// System controllers: never pages. The ones the Sensors SDK leaves out of `$AppViewScreen` (sa-sdk-ios
    /// 4.9.1): alerts, the keyboard's and input assistant's controllers, Safari, the player, pickers, share and
    /// compose sheets, context menus, the system's remote view controllers; and UIKit's own input controllers.
    public static let systemTypes: Set<String> = [
        // Public classes: their subclasses are skipped too.
        "UIAlertController", "UIActivityViewController", "UIImagePickerController", "UIDocumentPickerViewController",
        "UIDocumentBrowserViewController", "UIDocumentMenuViewController", "UIReferenceLibraryViewController",
        "UIInputViewController", "SFSafariViewController", "AVPlayerViewController", "SLComposeViewController",
        // Private classes, by name.
        "UIInputWindowController", "UIEditingOverlayViewController", "UICompatibilityInputViewController",
        "UISystemKeyboardDockController", "UIPredictionViewController", "UISystemInputAssistantViewController",
        "UICandidateViewController", "UIKeyboardCandidateGridCollectionViewController",
        "UIKeyboardCandidateRowViewController", "UIKeyboardHiddenViewController",
        "UIApplicationRotationFollowingController", "UIApplicationRotationFollowingControllerNoTouches",
        "UIActivityGroupViewController", "UIActivityContentViewController", "UISnapshotModalViewController",
        "UIWebRotatingAlertController", "UIEditUserWordController",
        "_UIRemoteInputViewController", "_UIRemoteViewController", "_UIRemoteDictionaryViewController",
        "_UIResilientRemoteViewContainerViewController", "_UIWaitingForRemoteViewContainerViewController",
        "_UIShareExtensionRemoteViewController", "_UIDocumentPickerRemoteViewController",
        "_UIAlertControllerTextFieldViewController", "_UIAlertShimPresentingViewController",
        "_UIFallbackPresentationViewController", "_UILongDefinitionViewController", "_UINoDefinitionViewController",
        "_UIActivityGroupListViewController", "_UIActivityUserDefaultsViewController",
        "_UIActivityViewControllerContentController", "_UIUserDefaultsActivityNavigationController",
        "_UIContextMenuActionsOnlyViewController", "_UICursorAccessoryViewController",
        "SFBrowserRemoteViewController", "SFAirDropActivityViewController", "SFAirDropViewController",
        "SFAppAutoFillPasswordViewController", "SFPasswordRemoteViewController", "_SFAppPasswordSavingViewController",
        "DDSafariViewController", "DDParsecLoadingViewController", "DDParsecNoDataViewController",
        "DDParsecCollectionViewController", "DDParsecRemoteCollectionViewController",
        "AVFullScreenViewController", "AVFullScreenPlaybackControlsViewController",
        "CKSMSComposeController", "CKSMSComposeRemoteViewController", "SLRemoteComposeViewController",
        "PLUIPrivacyViewController", "PLUICameraViewController", "PLPhotoTileViewController",
        "CAMViewfinderViewController", "CAMPreviewViewController", "CAMImagePickerCameraViewController",
        "PUPhotoPickerHostViewController", "PUUIAlbumListViewController", "PUUIPhotosAlbumViewController",
        "PUUIMomentsGridViewController", "WKActionSheet",
    ]

    /// Whether a class chain contains a container class: the container itself or any subclass of it.
    public static func isContainer(_ typeNames: [String]) -> Bool {
        typeNames.contains(where: containerTypes.contains)
    }

    /// Whether a class chain is a system controller or a SwiftUI hosting controller, or a subclass of one.
    /// Hosting controllers are generic, so their names carry the content type (`UIHostingController<Root>`,
    /// or mangled, `_TtGC7SwiftUI19UIHostingController…`); the name inside is what they share.
    public static func isSystemOrHosting(_ typeNames: [String]) -> Bool {
        typeNames.contains { systemTypes.contains($0) || $0.contains("UIHostingController") }
    }

    /// Whether `page` is a page of its own. A controller adopting ``SpoorPage`` always is. Otherwise
    /// containers, system and hosting controllers never are, and of the rest only top-level controllers are
    /// (no parent, or a navigation, tab, page or split controller as parent) unless `childPages`.
    public static func isPage(_ page: any CapturedPage, childPages: Bool) -> Bool {
        if page.customPage != nil { return true }
        if isContainer(page.typeNames) || isSystemOrHosting(page.typeNames) { return false }
        guard let parent = page.parentTypeNames else { return true }
        return childPages || isContainer(parent)
    }

    /// The page a container shows: itself when it is a page, else the child it shows, followed down.
    public static func shownPage(_ page: any CapturedPage, childPages: Bool) -> (any CapturedPage)? {
        var current: (any CapturedPage)? = page
        // Bounded, so a container that (wrongly) shows itself cannot loop.
        for _ in 0..<32 {
            guard let candidate = current else { return nil }
            if isPage(candidate, childPages: childPages) { return candidate }
            current = candidate.shownChild
        }
        return nil
    }

    // MARK: - Page properties

    /// `$screen_name`: the ``SpoorPage`` name, else the class name with its module (`MyApp.CartViewController`,
    /// as `NSStringFromClass` gives it and the Sensors SDK sends it).
    public static func screenName(_ page: any CapturedPage) -> String {
        trimmed(page.customPage?.spoorScreenName) ?? page.typeNames.first ?? ""
    }

    /// `$title`: the ``SpoorPage`` title, else the title view's content, else `navigationItem.title`, else
    /// the controller's `title`, else empty.
    public static func title(_ page: any CapturedPage) -> String {
        if let custom = trimmed(page.customPage?.spoorTitle) { return custom }
        if let titleView = page.titleView, !titleView.isHidden, let text = nonEmpty(elementContent(titleView)) {
            return text
        }
        return trimmed(page.navigationItemTitle) ?? trimmed(page.title) ?? ""
    }

    /// `$url`: the ``SpoorPage`` URL, else the screen name. The next page's `$referrer` is this.
    public static func url(_ page: any CapturedPage) -> String {
        trimmed(page.customPage?.spoorURL) ?? screenName(page)
    }

    /// The ``PageInfo`` the tracker gets for `page`. A page that opted out is marked with `ignoresAutoTrack`,
    /// so the tracker's ignore rules decide in one place.
    public static func pageInfo(_ page: any CapturedPage) -> PageInfo {
        PageInfo(
            screenName: screenName(page), title: title(page), url: url(page),
            ignoresAutoTrack: page.ignoresAutoCapture, customProperties: page.customPage?.spoorProperties ?? [:])
    }

    /// Whether a page's events and the clicks on it are left out: it opted out, or its screen name is on
    /// the configuration's ignore list.
    public static func isIgnored(_ page: PageInfo, by ignore: AutoTrackIgnoreList) -> Bool {
        page.ignoresAutoTrack || ignore.screenNames.contains(page.screenName)
    }

    // MARK: - Element properties

    /// What `view` is: the kind the glue gave it, else what its class chain says (text entry, lists, cells).
    public static func kind(of view: any CapturedView) -> ViewKind {
        guard view.kind == .plain else { return view.kind }
        let names = view.typeNames
        if names.contains(where: ["UITextField", "UITextView", "UISearchBar"].contains) { return .textInput }
        if names.contains(where: ["UITableView", "UICollectionView"].contains) { return .list }
        if names.contains(where: ["UITableViewCell", "UICollectionViewCell"].contains) { return .cell }
        return .plain
    }

    /// Private UIKit classes that draw bar button items (`_UIButtonBarButton`, `UINavigationButton`): their
    /// clicks are typed `UIBarButtonItem`.
    public static let barButtonTypes: Set<String> = ["_UIButtonBarButton", "UINavigationButton"]
    /// The private UIKit class that draws tab bar items: its clicks are typed `UITabBarItem`.
    public static let tabBarButtonType = "UITabBarButton"

    /// `$element_type`: the view's class name; `UIBarButtonItem` for a bar button item's button and
    /// `UITabBarItem` for a tab bar item's, as the Sensors SDK names them.
    public static func elementType(_ view: any CapturedView) -> String {
        let own = view.typeName
        if barButtonTypes.contains(own) { return "UIBarButtonItem" }
        if own == tabBarButtonType { return "UITabBarItem" }
        return own
    }

    /// `$element_content`. Value controls give their value: a switch `checked` / `unchecked`, a stepper its
    /// value (`%g`), a slider its value (`%f`), a segmented control the selected segment's title, a page
    /// control its current page. Text entry gives nothing. Any other view gives its own text, trimmed, else
    /// the contents of its visible subviews that did not opt out, depth first, joined with `-` (a cell's labels).
    public static func elementContent(_ view: any CapturedView) -> String {
        switch kind(of: view) {
        case .toggle(let isOn): return isOn ? "checked" : "unchecked"
        case .stepper(let value): return String(format: "%g", value)
        case .slider(let value, _): return String(format: "%f", value)
        case .pageControl(let current): return String(current)
        case .segmented(let selected, let titles):
            return titles.indices.contains(selected) ? trimmed(titles[selected]) ?? "" : ""
        case .textInput: return ""
        case .plain, .list, .cell: break
        }
        if let own = trimmed(view.text) { return own }
        return view.childViews
            .filter { !$0.isHidden && !$0.ignoresAutoCapture }
            .map(elementContent)
            .filter { !$0.isEmpty }
            .joined(separator: "-")
    }

    /// `$element_id`: the id the app set, else the accessibility identifier, else empty.
    public static func elementID(_ view: any CapturedView) -> String {
        trimmed(view.elementID) ?? trimmed(view.accessibilityIdentifier) ?? ""
    }

    /// `$element_position`: a segmented control's selected index; a tab bar item's index; in a list, the
    /// nearest cell's `section:item`; `nil` elsewhere.
    public static func elementPosition(_ view: any CapturedView) -> String? {
        if case .segmented(let selected, _) = kind(of: view), selected >= 0 { return String(selected) }
        if view.typeName == tabBarButtonType { return String(view.siblingIndex) }
        var current: (any CapturedView)? = view
        while let node = current {
            if let path = node.indexPath { return "\(path.section):\(path.item)" }
            current = node.parentView
        }
        return nil
    }

    /// `$element_path`: class names from the root view of the controller the element is in down to the
    /// element, each but the root with its index among same-type siblings
    /// (`UIView/UIStackView[0]/UIButton[2]`). Cells get their section and `-` (`UITableViewCell[2][-]`) and
    /// tab bar buttons `-`, so every row of a section, and every tab, shares one path and
    /// `$element_position` tells them apart. The root is the nearest controller that is a page or a
    /// container (a child controller that is not a page is looked through); without one, the snapshot's top.
    public static func elementPath(_ view: any CapturedView, childPages: Bool = false) -> String {
        let root = resolve(view, childPages: childPages).rootDepth
        var components: [String] = []
        var current: (any CapturedView)? = view
        var depth = 0
        while let node = current {
            let name = node.typeName
            if depth == root || node.parentView == nil {
                components.append(name)
                break
            }
            if let path = node.indexPath {
                components.append("\(name)[\(path.section)][-]")
            } else if name == tabBarButtonType {
                components.append("\(name)[-]")
            } else {
                components.append("\(name)[\(node.siblingIndex)]")
            }
            current = node.parentView
            depth += 1
        }
        return components.reversed().joined(separator: "/")
    }

    // MARK: - What is a click

    /// Whether an action sent through `sendAction` is a click. Bar and tab bar items never are (the bar's
    /// button sent the same tap first); text entry never is; value controls (switch, stepper, segmented and
    /// page control) always are, even sent from code; a slider is once the finger lifts; any other control
    /// is when the tap's touch ended, so `sendActions(for:)` from code is not a click. A control's `UIAction`
    /// (``ActionEvent/actionHandler``) comes with no event: it counts as a tap that ended.
    public static func isClick(sender: ActionSender, event: ActionEvent) -> Bool {
        guard case .view(let kind) = sender else { return false }
        let tapped = event == .touchEnded || event == .actionHandler
        switch kind {
        case .textInput: return false
        case .toggle, .stepper, .segmented, .pageControl: return true
        case .slider(_, let isTracking): return tapped && !isTracking
        case .plain, .list, .cell: return tapped
        }
    }

    /// Whether `view` is hidden: itself or any view around it.
    public static func isHidden(_ view: any CapturedView) -> Bool {
        var current: (any CapturedView)? = view
        while let node = current {
            if node.isHidden { return true }
            current = node.parentView
        }
        return false
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

    /// Whether clicks on `view` are ignored by type: its class or any superclass is on the ignore list's
    /// element types, so ignoring `UISwitch` ignores `MyApp.FancySwitch` too.
    public static func isIgnoredType(_ view: any CapturedView, by ignore: AutoTrackIgnoreList) -> Bool {
        view.typeNames.contains(where: ignore.elementTypes.contains)
    }

    // MARK: - Gestures

    /// The recognizers whose taps are clicks.
    public static let gestureTypes: Set<String> = ["UITapGestureRecognizer", "UILongPressGestureRecognizer"]

    /// Views whose gestures are never clicks: text entry (`ViewKind.textInput`) and web content.
    public static let gestureBlacklist: Set<String> = ["WKWebView", "WKContentView", "WKChildScrollView"]

    /// Whether a recognizer's taps can be clicks: it is a tap or long-press recognizer itself, not a subclass
    /// (as the Sensors SDK's `isMemberOfClass:`): UIKit's subclasses serve text selection, menus and the like,
    /// and an app's subclass is a gesture of its own. `typeNames` start at the class the object reports (see
    /// ``typeNames(isa:reported:)``), so an observed recognizer is still a tap recognizer.
    public static func isClickRecognizer(_ typeNames: [String]) -> Bool {
        typeNames.first.map(gestureTypes.contains) ?? false
    }

    /// Whether a recognizer calling its targets in `phase` made a click: it ended, or it was cancelled after it
    /// began (a long press held long enough, then taken over by a scroll or the system), as the Sensors SDK
    /// counts both. A tap recognizer calls its targets only once it has ended.
    public static func isGestureClick(_ phase: GesturePhase) -> Bool {
        phase == .ended || phase == .cancelled
    }

    /// Whether a target's action is the app's: UIKit's own actions on the public recognizers are private
    /// methods, named with a leading underscore (`_longPressGestureRecognized:`).
    public static func isAppAction(_ action: String) -> Bool {
        !action.isEmpty && !action.hasPrefix("_")
    }

    /// Whether a gesture on `view` can be a click: not on text entry or web content.
    public static func acceptsGestureClicks(_ view: any CapturedView) -> Bool {
        kind(of: view) != .textInput && !view.typeNames.contains(where: gestureBlacklist.contains)
    }

    // MARK: - The page of a view

    /// What walking up from a view finds: the page it is on, whether a controller on the way opted out, and
    /// how many steps up the path's root is.
    struct Resolution {
        var page: (any CapturedPage)?
        var optedOut = false
        var rootDepth = Int.max
    }

    /// Walks up from `view`. The first controller that is a page is the view's page; a container stops the
    /// walk with the page it shows (a bar button names the page on top); a child controller that is not a
    /// page, a hosting controller or a system controller is looked through to its parent's.
    static func resolve(_ view: any CapturedView, childPages: Bool) -> Resolution {
        var resolution = Resolution()
        var current: (any CapturedView)? = view
        var depth = 0
        while let node = current {
            if let page = node.owningPage {
                resolution.optedOut = resolution.optedOut || page.ignoresAutoCapture
                if isPage(page, childPages: childPages) || isContainer(page.typeNames) {
                    resolution.rootDepth = depth
                    resolution.page = shownPage(page, childPages: childPages)
                    if let shown = resolution.page, shown.ignoresAutoCapture { resolution.optedOut = true }
                    return resolution
                }
            }
            current = node.parentView
            depth += 1
        }
        return resolution
    }

    /// The page `view` is on (see ``elementPath(_:childPages:)`` for how it is found); `nil` when none is known.
    public static func page(of view: any CapturedView, childPages: Bool = false) -> (any CapturedPage)? {
        resolve(view, childPages: childPages).page
    }

    // MARK: - The click

    /// The `$AppClick` for `view`, or `nil` when it is not one: hidden, opted out (the view, a view around
    /// it, or a controller it is in), text entry, an empty segmented control, or ignored by type. Its page is
    /// the view's page when known; the ignore lists by element type and id, ignored pages and the 100 ms
    /// debounce are applied by ``AutoCapture`` and the tracker.
    public static func click(
        on view: any CapturedView, childPages: Bool = false, ignore: AutoTrackIgnoreList = AutoTrackIgnoreList()
    ) -> AppClick? {
        let resolution = resolve(view, childPages: childPages)
        guard !isHidden(view), !isOptedOut(view), !resolution.optedOut, kind(of: view) != .textInput,
            !isIgnoredType(view, by: ignore)
        else { return nil }
        if case .segmented(let selected, _) = kind(of: view), selected < 0 { return nil }
        return makeClick(view, type: elementType(view), id: elementID(view), properties: view.customProperties,
                         page: resolution.page, childPages: childPages)
    }

    /// The `$AppClick` for a selected cell: typed as its list (`UITableView`, `UICollectionView`) with the
    /// list's element id, as the Sensors SDK reports it; content, position and path are the cell's. Its
    /// properties are the list's, then the cell's own, then `delegateProperties`, the later winning.
    public static func cellClick(
        on cell: any CapturedView, delegateProperties: Properties = [:], childPages: Bool = false,
        ignore: AutoTrackIgnoreList = AutoTrackIgnoreList()
    ) -> AppClick? {
        let resolution = resolve(cell, childPages: childPages)
        var ancestor = cell.parentView
        while let node = ancestor, kind(of: node) != .list { ancestor = node.parentView }
        let list = ancestor ?? cell
        guard !isHidden(cell), !isOptedOut(cell), !resolution.optedOut, !isIgnoredType(cell, by: ignore),
            !isIgnoredType(list, by: ignore)
        else { return nil }
        var properties = list.customProperties
        properties.merge(cell.customProperties) { _, cell in cell }
        properties.merge(delegateProperties) { _, delegate in delegate }
        return makeClick(cell, type: list.typeName, id: elementID(list), properties: properties,
                         page: resolution.page, childPages: childPages)
    }

    private static func makeClick(
        _ view: any CapturedView, type: String, id: String, properties: Properties, page: (any CapturedPage)?,
        childPages: Bool
    ) -> AppClick {
        AppClick(
            elementType: type, elementContent: elementContent(view), elementID: id,
            elementPosition: elementPosition(view), elementPath: elementPath(view, childPages: childPages),
            page: page.map(pageInfo), customProperties: properties)
    }

    // MARK: - Helpers

    /// A class name as the glue reads it (`NSStringFromClass`), without the prefix key-value observing adds
    /// to an observed object's class (`NSKVONotifying_UIButton` is a `UIButton`).
    public static func className(_ runtimeName: String) -> String {
        let observed = "NSKVONotifying_"
        return runtimeName.hasPrefix(observed) ? String(runtimeName.dropFirst(observed.count)) : runtimeName
    }

    static func trimmed(_ text: String?) -> String? {
        guard let text else { return nil }
        return nonEmpty(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }
}
