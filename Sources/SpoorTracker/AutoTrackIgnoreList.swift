/// What auto-tracking leaves out: pages by screen name, clicks by element type or element id.
///
/// ```swift
/// configuration.autoTrack.ignore = AutoTrackIgnoreList(
///     screenNames: ["SplashViewController"], elementTypes: ["UISwitch"], elementIDs: ["debug-menu"])
/// ```
///
/// An ignored page emits neither `$AppViewScreen` nor `$AppPageLeave` and is never a later page's
/// `$referrer`; clicks on it are still tracked (filter them by element). A page can also opt out itself
/// with ``PageInfo/ignoresAutoTrack``. Names are compared exactly.
public struct AutoTrackIgnoreList: Sendable, Hashable {
    /// Pages whose `$screen_name` is one of these are not tracked.
    public var screenNames: Set<String>
    /// Clicks on elements whose `$element_type` is one of these are not tracked.
    public var elementTypes: Set<String>
    /// Clicks on elements whose `$element_id` is one of these are not tracked.
    public var elementIDs: Set<String>

    /// Creates an ignore list; the default ignores nothing.
    public init(screenNames: Set<String> = [], elementTypes: Set<String> = [], elementIDs: Set<String> = []) {
        self.screenNames = screenNames
        self.elementTypes = elementTypes
        self.elementIDs = elementIDs
    }

    /// Whether `page` is left out of page tracking.
    func ignores(_ page: PageInfo) -> Bool {
        page.ignoresAutoTrack || screenNames.contains(page.screenName)
    }

    /// Whether `click` is left out.
    func ignores(_ click: AppClick) -> Bool {
        elementTypes.contains(click.elementType) || (!click.elementID.isEmpty && elementIDs.contains(click.elementID))
    }
}
