public import SpoorModel
internal import SpoorSystem

/// What an app sets on its views for click capture. `UIView` adopts it (the UIKit glue does); a host with
/// views of its own can too. The options live beside the object, held weakly, so they go with it.
public protocol SpoorViewOptions: AnyObject {}

extension SpoorViewOptions {
    /// Leaves this view, and everything inside it, out of click capture.
    public var spoorIgnored: Bool {
        get { ViewOptionsStore.shared.options(of: self).ignored }
        set { ViewOptionsStore.shared.update(self) { $0.ignored = newValue } }
    }

    /// `$element_id` for clicks on this view; it wins over the accessibility identifier.
    public var spoorElementID: String? {
        get { ViewOptionsStore.shared.options(of: self).elementID }
        set { ViewOptionsStore.shared.update(self) { $0.elementID = newValue } }
    }

    /// Properties added to clicks on this view (on a table or collection view: to clicks on its cells).
    public var spoorProperties: Properties {
        get { ViewOptionsStore.shared.options(of: self).properties }
        set { ViewOptionsStore.shared.update(self) { $0.properties = newValue } }
    }
}

/// The options of every object that has some, by identity, each entry holding its object weakly: an
/// object freed, and another allocated at its address, never inherits its options.
final class ViewOptionsStore: Sendable {
    static let shared = ViewOptionsStore()

    struct Options: Sendable {
        var ignored = false
        var elementID: String?
        var properties: Properties = [:]
    }

    private struct Entry {
        weak var object: AnyObject?
        var options: Options
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Entries of freed objects are dropped when the table reaches this size; it then grows with the
        /// live ones, so dropping costs O(1) per write over time.
        var purgeAt = 64
    }

    private let table = Locked(Table())

    func options(of object: AnyObject) -> Options {
        table.withLock { table in
            guard let entry = table.entries[ObjectIdentifier(object)], entry.object === object else { return Options() }
            return entry.options
        }
    }

    func update(_ object: AnyObject, _ change: (inout Options) -> Void) {
        table.withLock { table in
            let key = ObjectIdentifier(object)
            var options = table.entries[key].flatMap { $0.object === object ? $0.options : nil } ?? Options()
            change(&options)
            table.entries[key] = Entry(object: object, options: options)
            if table.entries.count >= table.purgeAt {
                table.entries = table.entries.filter { $0.value.object != nil }
                table.purgeAt = max(64, table.entries.count * 2)
            }
        }
    }
}
