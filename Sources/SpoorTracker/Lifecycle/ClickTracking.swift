/// Counts two clicks on the same element within 100 ms once (docs/lifecycle.md, "Clicks").
struct ClickDebouncer: Sendable {
    /// Clicks on the same element at most this far apart (monotonic nanoseconds) count once.
    static let window: UInt64 = 100_000_000

    private struct Key: Sendable, Hashable {
        var screenName: String?
        var path: String
        var id: String
        var position: String?
        var type: String
        var content: String
    }

    private var last: (key: Key, at: UInt64)?

    /// `true` when `click` at monotonic `now` counts; `false` when it repeats the last counted click on the
    /// same element (same page, path, id, position, type and content) within the window.
    mutating func accept(_ click: AppClick, screenName: String?, now: UInt64) -> Bool {
        let key = Key(
            screenName: screenName, path: click.elementPath, id: click.elementID,
            position: click.elementPosition, type: click.elementType, content: click.elementContent
        )
        if let last, last.key == key, now >= last.at, now - last.at <= Self.window { return false }
        last = (key, now)
        return true
    }
}
