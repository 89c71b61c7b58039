internal import SpoorCore

/// What the host knows about a page: a view controller on iOS, a route or window on Linux.
public struct PageInfo: Sendable, Hashable {
    /// `$screen_name`: the page's stable name, such as a view-controller class or a route pattern.
    public var screenName: String
    /// `$title`: the title shown to the user, when there is one.
    public var title: String?
    /// `$url`: the page's address, used as the next page's `$referrer`.
    public var url: String?

    /// Creates a page description.
    public init(screenName: String, title: String? = nil, url: String? = nil) {
        self.screenName = screenName
        self.title = title
        self.url = url
    }
}

/// One visible page and its timer.
struct VisiblePage: Sendable, Hashable, Codable {
    var id: String
    var screenName: String
    var title: String?
    var url: String?
    var referrer: String?
    var referrerTitle: String?
    /// `true` once its `$AppViewScreen` went out; `false` while it is held back (P6).
    var viewed: Bool
    /// Monotonic start of its running timer; `nil` while the app is not started.
    var timerStart: UInt64?

    /// `$AppViewScreen` properties.
    var viewProperties: Properties {
        var properties: Properties = ["$screen_name": .string(screenName)]
        if let title { properties["$title"] = .string(title) }
        if let url { properties["$url"] = .string(url) }
        if let referrer { properties["$referrer"] = .string(referrer) }
        if let referrerTitle { properties["$referrer_title"] = .string(referrerTitle) }
        return properties
    }

    /// `$AppPageLeave` properties for a leave at monotonic `now` (P3).
    func leaveProperties(start: UInt64, now: UInt64) -> Properties {
        var properties: Properties = [
            "$screen_name": .string(screenName),
            "event_duration": .double(EventDuration.seconds(from: start, to: now)),
        ]
        if let title { properties["$title"] = .string(title) }
        if let url { properties["$url"] = .string(url) }
        if let referrer { properties["$referrer"] = .string(referrer) }
        return properties
    }
}

/// A page event the page tracker wants emitted.
enum PageEvent: Sendable, Hashable {
    case view(Properties)
    case leave(Properties)
}

/// Visible pages, their timers and the referrer chain (P1–P6). A value type: inputs in, events out.
struct PageTracker: Sendable, Hashable {
    /// Visible pages in the order they appeared.
    private(set) var visible: [VisiblePage] = []
    /// The last page whose `$AppViewScreen` went out, for the next page's referrer.
    private(set) var lastViewedURL: String?
    private(set) var lastViewedTitle: String?

    /// A page appears. While started it is viewed at once (P1); otherwise it is held back until the
    /// next start (P6). A page already visible changes nothing (P2).
    mutating func appear(id: String, info: PageInfo, started: Bool, now: UInt64) -> [PageEvent] {
        guard !visible.contains(where: { $0.id == id }) else { return [] }
        visible.append(VisiblePage(
            id: id, screenName: info.screenName, title: info.title, url: info.url,
            referrer: nil, referrerTitle: nil, viewed: false, timerStart: nil
        ))
        guard started else { return [] }
        return [view(at: visible.count - 1, now: now)]
    }

    /// A page disappears: `$AppPageLeave` when its timer runs (P3); nothing when it was held back or
    /// already left at the app's end.
    mutating func disappear(id: String, now: UInt64) -> [PageEvent] {
        guard let index = visible.firstIndex(where: { $0.id == id }) else { return [] }
        let page = visible.remove(at: index)
        guard let start = page.timerStart else { return [] }
        return [.leave(page.leaveProperties(start: start, now: now))]
    }

    /// The app started: held-back pages are viewed now and every visible page's timer restarts from zero
    /// (time in the background never counts, P5/P6).
    mutating func appStarted(now: UInt64) -> [PageEvent] {
        var events: [PageEvent] = []
        for index in visible.indices {
            if visible[index].viewed {
                visible[index].timerStart = now
            } else {
                events.append(view(at: index, now: now))
            }
        }
        return events
    }

    /// The app ended: every timed page is left (P5); the pages stay visible for the next start.
    mutating func appEnded(now: UInt64) -> [PageEvent] {
        var events: [PageEvent] = []
        for index in visible.indices {
            guard let start = visible[index].timerStart else { continue }
            events.append(.leave(visible[index].leaveProperties(start: start, now: now)))
            visible[index].timerStart = nil
        }
        return events
    }

    /// The page clicks belong to: the most recently appeared visible page.
    var currentPage: VisiblePage? { visible.last }

    private mutating func view(at index: Int, now: UInt64) -> PageEvent {
        visible[index].referrer = lastViewedURL
        visible[index].referrerTitle = lastViewedTitle
        visible[index].viewed = true
        visible[index].timerStart = now
        lastViewedURL = visible[index].url
        lastViewedTitle = visible[index].title
        return .view(visible[index].viewProperties)
    }
}
