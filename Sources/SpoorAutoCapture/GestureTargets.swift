/// The app's targets on each observed gesture recognizer, held weakly on both sides: UIKit has no public
/// way to list a recognizer's targets, so the glue reports them as they are added and removed.
package struct GestureTargets {
    package init() {}

    private struct Target {
        weak var object: AnyObject?
        var action: String
    }

    private struct Entry {
        weak var recognizer: AnyObject?
        var targets: [Target] = []
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    /// Entries of freed recognizers are dropped when the table reaches this size; it then grows with the
    /// live ones, so dropping costs O(1) per addition over time.
    private var purgeAt = 64

    /// Notes that `target` handles `action` for `recognizer` (once per pair).
    package mutating func add(target: AnyObject, action: String, to recognizer: AnyObject) {
        let key = ObjectIdentifier(recognizer)
        // A freed recognizer's address can come back as a new one: its entry is stale.
        if entries[key]?.recognizer !== recognizer { entries[key] = Entry(recognizer: recognizer) }
        let known = entries[key]?.targets.contains { $0.object === target && $0.action == action } ?? false
        if !known { entries[key]?.targets.append(Target(object: target, action: action)) }
        if entries.count >= purgeAt {
            entries = entries.filter { $0.value.recognizer != nil }
            purgeAt = max(64, entries.count * 2)
        }
    }

    /// Forgets `recognizer`'s targets that match: a `nil` target or action matches any, as in UIKit.
    package mutating func remove(target: AnyObject?, action: String?, from recognizer: AnyObject) {
        let key = ObjectIdentifier(recognizer)
        guard entries[key]?.recognizer === recognizer else { return }
        entries[key]?.targets.removeAll { entry in
            (target == nil || entry.object === target) && (action == nil || entry.action == action)
        }
    }

    /// How many recognizers the table holds entries for: live ones, and freed ones not yet dropped.
    package var count: Int { entries.count }

    /// Whether `recognizer` has an app target still alive.
    package func hasAppTarget(_ recognizer: AnyObject) -> Bool {
        guard let entry = entries[ObjectIdentifier(recognizer)], entry.recognizer === recognizer else { return false }
        return entry.targets.contains { $0.object != nil }
    }
}
