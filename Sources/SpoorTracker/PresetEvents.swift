public import SpoorModel

/// Durations in event properties: seconds with 3 decimals, and 0 for anything of 24 hours or more.
public enum EventDuration {
    /// Twenty-four hours in nanoseconds: durations this long or longer are reported as 0.
    public static let limitNanoseconds: UInt64 = 24 * 3600 * 1_000_000_000

    /// `nanoseconds` as seconds rounded to the millisecond, or 0 when ≥ 24 h.
    public static func seconds(fromNanoseconds nanoseconds: UInt64) -> Double {
        guard nanoseconds < limitNanoseconds else { return 0 }
        return Double((nanoseconds + 500_000) / 1_000_000) / 1000
    }
}

/// `$AppStart`: the app came to the foreground (docs/lifecycle.md L1, L2, L4, L5).
public struct AppStart: AutoTrackedEvent, Hashable {
    public static let eventName = "$AppStart"
    public static let option = AutoTrackOptions.appStart
    /// `$resume_from_background`: a hot start, or the user opening a passively started app.
    public var resumeFromBackground: Bool
    /// `$is_first_time`: the first launch ever on this install.
    public var isFirstTime: Bool

    /// Creates the event.
    public init(resumeFromBackground: Bool, isFirstTime: Bool) {
        self.resumeFromBackground = resumeFromBackground
        self.isFirstTime = isFirstTime
    }

    public var properties: Properties {
        ["$resume_from_background": .bool(resumeFromBackground), "$is_first_time": .bool(isFirstTime)]
    }
}

/// `$AppStartPassively`: the system launched the app in the background (docs/lifecycle.md L3).
public struct AppStartPassively: AutoTrackedEvent, Hashable {
    public static let eventName = "$AppStartPassively"
    public static let option = AutoTrackOptions.appStartPassively
    /// `$resume_from_background`: always false for a passive start.
    public var resumeFromBackground: Bool
    /// `$is_first_time`: the first launch ever on this install.
    public var isFirstTime: Bool

    /// Creates the event.
    public init(resumeFromBackground: Bool = false, isFirstTime: Bool) {
        self.resumeFromBackground = resumeFromBackground
        self.isFirstTime = isFirstTime
    }

    public var properties: Properties {
        ["$resume_from_background": .bool(resumeFromBackground), "$is_first_time": .bool(isFirstTime)]
    }
}

/// `$AppEnd`: the app left the foreground (docs/lifecycle.md L6, L7, L9, L10).
public struct AppEnd: AutoTrackedEvent, Hashable {
    public static let eventName = "$AppEnd"
    public static let option = AutoTrackOptions.appEnd
    /// `event_duration`: seconds since the matching `$AppStart` (3 decimals, 0 when ≥ 24 h).
    public var duration: Double
    /// `$app_end_reason`, such as `"recovered"` after a crash; absent when `nil`.
    public var reason: String?

    /// Creates the event; `duration` in seconds.
    public init(duration: Double, reason: String? = nil) {
        self.duration = duration
        self.reason = reason
    }

    public var properties: Properties {
        var properties: Properties = ["event_duration": .double(duration)]
        if let reason { properties["$app_end_reason"] = .string(reason) }
        return properties
    }
}

/// The page properties shared by `$AppViewScreen`, `$AppPageLeave` and `$AppClick`.
public struct PageInfo: Sendable, Hashable {
    /// `$screen_name`.
    public var screenName: String
    /// `$title`.
    public var title: String
    /// `$url`.
    public var url: String
    /// The page opts out of page auto-tracking: no `$AppViewScreen` or `$AppPageLeave` for it (see
    /// ``AutoTrackIgnoreList``). Not an event property.
    public var ignoresAutoTrack: Bool
    /// The page's own properties, added to its `$AppViewScreen`, `$AppPageLeave` and `$AppClick` events; a
    /// preset property of the same name wins. Not kept across a crash: a recovered leave has none.
    public var customProperties: Properties

    /// Describes a page.
    public init(
        screenName: String, title: String = "", url: String = "", ignoresAutoTrack: Bool = false,
        customProperties: Properties = [:]
    ) {
        self.screenName = screenName
        self.title = title
        self.url = url
        self.ignoresAutoTrack = ignoresAutoTrack
        self.customProperties = customProperties
    }
}

/// `$AppViewScreen`: a page appeared (docs/lifecycle.md P1, P6).
public struct AppViewScreen: AutoTrackedEvent, Hashable {
    public static let eventName = "$AppViewScreen"
    public static let option = AutoTrackOptions.appViewScreen
    /// The page.
    public var page: PageInfo
    /// `$referrer`: the previous page's `$url`, when there was one.
    public var referrer: String?
    /// `$referrer_title`: the previous page's `$title`, when there was one.
    public var referrerTitle: String?

    /// Creates the event.
    public init(page: PageInfo, referrer: String? = nil, referrerTitle: String? = nil) {
        self.page = page
        self.referrer = referrer
        self.referrerTitle = referrerTitle
    }

    public var properties: Properties {
        var properties: Properties = [
            "$screen_name": .string(page.screenName), "$title": .string(page.title), "$url": .string(page.url),
        ]
        if let referrer { properties["$referrer"] = .string(referrer) }
        if let referrerTitle { properties["$referrer_title"] = .string(referrerTitle) }
        properties.merge(page.customProperties) { preset, _ in preset }
        return properties
    }
}

/// `$AppPageLeave`: a page disappeared, or the app ended while it was shown (docs/lifecycle.md P3, P5, L10).
public struct AppPageLeave: AutoTrackedEvent, Hashable {
    public static let eventName = "$AppPageLeave"
    public static let option = AutoTrackOptions.appPageLeave
    /// The page.
    public var page: PageInfo
    /// `event_duration`: seconds the page was shown (3 decimals, 0 when ≥ 24 h).
    public var duration: Double
    /// `$referrer`: the `$url` of the page before it, when there was one.
    public var referrer: String?
    /// `$app_end_reason`, such as `"recovered"`; absent when `nil`.
    public var reason: String?

    /// Creates the event; `duration` in seconds.
    public init(page: PageInfo, duration: Double, referrer: String? = nil, reason: String? = nil) {
        self.page = page
        self.duration = duration
        self.referrer = referrer
        self.reason = reason
    }

    public var properties: Properties {
        var properties: Properties = [
            "$screen_name": .string(page.screenName), "$title": .string(page.title), "$url": .string(page.url),
            "event_duration": .double(duration),
        ]
        if let referrer { properties["$referrer"] = .string(referrer) }
        if let reason { properties["$app_end_reason"] = .string(reason) }
        properties.merge(page.customProperties) { preset, _ in preset }
        return properties
    }
}

/// `$AppClick`: the user tapped or clicked an element (docs/lifecycle.md, "Clicks").
public struct AppClick: AutoTrackedEvent, Hashable {
    public static let eventName = "$AppClick"
    public static let option = AutoTrackOptions.appClick
    /// `$element_type`, such as `button`.
    public var elementType: String
    /// `$element_content`: the element's text.
    public var elementContent: String
    /// `$element_id`.
    public var elementID: String
    /// `$element_position`, for elements in lists.
    public var elementPosition: String?
    /// `$element_path`: identifies the element within its page.
    public var elementPath: String
    /// The page the element is on.
    public var page: PageInfo?
    /// The element's own properties; they win over the page's custom properties, and preset properties win
    /// over both.
    public var customProperties: Properties

    /// Creates the event.
    public init(
        elementType: String, elementContent: String = "", elementID: String = "", elementPosition: String? = nil,
        elementPath: String, page: PageInfo? = nil, customProperties: Properties = [:]
    ) {
        self.elementType = elementType
        self.elementContent = elementContent
        self.elementID = elementID
        self.elementPosition = elementPosition
        self.elementPath = elementPath
        self.page = page
        self.customProperties = customProperties
    }

    public var properties: Properties {
        var properties: Properties = [
            "$element_type": .string(elementType), "$element_content": .string(elementContent),
            "$element_id": .string(elementID), "$element_path": .string(elementPath),
        ]
        if let elementPosition { properties["$element_position"] = .string(elementPosition) }
        if let page {
            properties["$screen_name"] = .string(page.screenName)
            properties["$title"] = .string(page.title)
        }
        // Preset properties win, then the element's own, then its page's.
        properties.merge(customProperties) { preset, _ in preset }
        if let page { properties.merge(page.customProperties) { preset, _ in preset } }
        return properties
    }
}

/// `AppCrashed`: the previous process crashed (docs/lifecycle.md L10).
public struct AppCrashed: AutoTrackedEvent, Hashable {
    public static let eventName = "AppCrashed"
    public static let option = AutoTrackOptions.appCrashed
    /// `app_crashed_reason`: the signal or exception, as far as it is known.
    public var reason: String

    /// Creates the event.
    public init(reason: String) {
        self.reason = reason
    }

    public var properties: Properties { ["app_crashed_reason": .string(reason)] }
}
