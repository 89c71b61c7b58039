package import SpoorModel

/// One visible page and its timer.
package struct VisiblePage: Sendable, Hashable, Codable {
    package var id: String
    package var page: PageInfo
    package var referrer: String?
    package var referrerTitle: String?
    /// `true` once its `$AppViewScreen` went out; `false` while it is held back (P6).
    package var viewed: Bool
    /// On the ignore list: never viewed, timed or left, never a referrer. Not saved: such a page has no
    /// timer, so checkpoints (which keep timed pages) never hold it.
    package var ignored = false
    /// Monotonic start of its running timer; `nil` while the app is not started.
    package var timerStart: UInt64?

    private enum CodingKeys: String, CodingKey {
        case id, screenName, title, url, referrer, referrerTitle, viewed, timerStart
    }

    package init(id: String, page: PageInfo, referrer: String?, referrerTitle: String?, viewed: Bool, timerStart: UInt64?) {
        self.id = id
        self.page = page
        self.referrer = referrer
        self.referrerTitle = referrerTitle
        self.viewed = viewed
        self.timerStart = timerStart
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        page = PageInfo(
            screenName: try container.decode(String.self, forKey: .screenName),
            title: try container.decode(String.self, forKey: .title),
            url: try container.decode(String.self, forKey: .url)
        )
        referrer = try container.decodeIfPresent(String.self, forKey: .referrer)
        referrerTitle = try container.decodeIfPresent(String.self, forKey: .referrerTitle)
        viewed = try container.decode(Bool.self, forKey: .viewed)
        timerStart = try container.decodeIfPresent(UInt64.self, forKey: .timerStart)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(page.screenName, forKey: .screenName)
        try container.encode(page.title, forKey: .title)
        try container.encode(page.url, forKey: .url)
        try container.encodeIfPresent(referrer, forKey: .referrer)
        try container.encodeIfPresent(referrerTitle, forKey: .referrerTitle)
        try container.encode(viewed, forKey: .viewed)
        try container.encodeIfPresent(timerStart, forKey: .timerStart)
    }

    /// `$AppViewScreen` properties.
    package var viewProperties: Properties {
        AppViewScreen(page: page, referrer: referrer, referrerTitle: referrerTitle).properties
    }

    /// `$AppPageLeave` properties for a leave at monotonic `now` (P3); `reason` marks recovered leaves.
    package func leaveProperties(start: UInt64, now: UInt64, reason: String? = nil) -> Properties {
        AppPageLeave(
            page: page, duration: EventDuration.seconds(from: start, to: now), referrer: referrer, reason: reason
        ).properties
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
    /// An `ignored` page stays visible (clicks name it) but emits nothing.
    mutating func appear(id: String, info: PageInfo, started: Bool, now: UInt64, ignored: Bool = false) -> [PageEvent] {
        guard !visible.contains(where: { $0.id == id }) else { return [] }
        var page = VisiblePage(id: id, page: info, referrer: nil, referrerTitle: nil, viewed: false, timerStart: nil)
        page.ignored = ignored
        visible.append(page)
        guard started, !ignored else { return [] }
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
        for index in visible.indices where !visible[index].ignored {
            if visible[index].viewed {
                visible[index].timerStart = now
            } else {
                events.append(view(at: index, now: now))
            }
        }
        return events
    }

    /// Tracking resumed after an opt-out: every visible page is viewed anew, timed from now (what was shown
    /// while opted out was never recorded).
    mutating func viewAllAgain(now: UInt64) -> [PageEvent] {
        // The referrer chain starts over: pages viewed while opted out were never recorded.
        lastViewedURL = nil
        lastViewedTitle = nil
        return visible.indices.filter { !visible[$0].ignored }.map { view(at: $0, now: now) }
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
        lastViewedURL = visible[index].page.url
        lastViewedTitle = visible[index].page.title
        return .view(visible[index].viewProperties)
    }
}
