internal import SpoorCore

/// What the host reports about a clicked element (`$AppClick`).
public struct ClickInfo: Sendable, Hashable {
    /// `$element_type`, such as `UIButton` or `button`.
    public var elementType: String?
    /// `$element_content`: the element's visible text.
    public var elementContent: String?
    /// `$element_id`: the element's id, when the host gives elements ids.
    public var elementID: String?
    /// `$element_position`: the element's position in a list, such as `2:5`.
    public var elementPosition: String?
    /// `$element_path`: a path that identifies the element within its page.
    public var elementPath: String?

    /// Creates a click description.
    public init(
        elementType: String? = nil, elementContent: String? = nil, elementID: String? = nil,
        elementPosition: String? = nil, elementPath: String? = nil
    ) {
        self.elementType = elementType
        self.elementContent = elementContent
        self.elementID = elementID
        self.elementPosition = elementPosition
        self.elementPath = elementPath
    }

    /// `$AppClick` properties, with the current page's `$screen_name` and `$title`.
    func properties(page: VisiblePage?) -> Properties {
        var properties: Properties = [:]
        if let elementType { properties["$element_type"] = .string(elementType) }
        if let elementContent { properties["$element_content"] = .string(elementContent) }
        if let elementID { properties["$element_id"] = .string(elementID) }
        if let elementPosition { properties["$element_position"] = .string(elementPosition) }
        if let elementPath { properties["$element_path"] = .string(elementPath) }
        if let page {
            properties["$screen_name"] = .string(page.screenName)
            if let title = page.title { properties["$title"] = .string(title) }
        }
        return properties
    }
}

/// Counts two clicks on the same element within 100 ms once (§5).
struct ClickDebouncer: Sendable {
    /// Clicks on the same element at most this far apart count once.
    static let window: UInt64 = 100_000_000

    private struct Key: Sendable, Hashable {
        var screenName: String?
        var path: String?
        var id: String?
        var position: String?
        var type: String?
        var content: String?
    }

    private var last: (key: Key, at: UInt64)?

    /// `true` when a click on `click` at monotonic `now` counts; `false` when it repeats the last
    /// counted click on the same element within the window.
    mutating func accept(_ click: ClickInfo, screenName: String?, now: UInt64) -> Bool {
        let key = Key(
            screenName: screenName, path: click.elementPath, id: click.elementID,
            position: click.elementPosition, type: click.elementType, content: click.elementContent
        )
        if let last, last.key == key, now >= last.at, now - last.at <= Self.window { return false }
        last = (key, now)
        return true
    }
}
