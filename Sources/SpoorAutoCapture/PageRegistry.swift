import SpoorTracker

/// The pages a capture showed, each held weakly by its object (the view controller). Identity is the object
/// itself, never its address: ids are handed out in order, so a controller allocated where a freed one was is
/// a new page, not "already visible".
struct PageRegistry {
    /// A moment on the tracker's clocks.
    struct Instant: Hashable {
        var wall: Int64
        var monotonic: UInt64
    }

    /// A page found gone: its object was freed while it was shown.
    struct Gone: Hashable {
        var id: String
        var lastSeen: Instant
    }

    private struct Entry {
        weak var object: AnyObject?
        var id: String
        var info: PageInfo
        /// The last moment the object was known alive and shown.
        var lastSeen: Instant
    }

    private var entries: [Entry] = []
    private var nextID = 1

    /// Shows `object`'s page and returns its id: the one it already has while it stays shown, else a new one.
    mutating func show(_ object: AnyObject, info: PageInfo, at now: Instant) -> String {
        if let index = entries.firstIndex(where: { $0.object === object }) {
            entries[index].info = info
            entries[index].lastSeen = now
            return entries[index].id
        }
        let id = "page-\(nextID)"
        nextID += 1
        entries.append(Entry(object: object, id: id, info: info, lastSeen: now))
        return id
    }

    /// Forgets `object`'s page and returns its id, or `nil` when it was not shown.
    mutating func remove(_ object: AnyObject) -> String? {
        guard let index = entries.firstIndex(where: { $0.object === object }) else { return nil }
        return entries.remove(at: index).id
    }

    /// Drops the pages whose objects were freed, returning them with the last moment they were seen; the
    /// others are seen `now`.
    mutating func sweep(now: Instant) -> [Gone] {
        var gone: [Gone] = []
        entries.removeAll { entry in
            guard entry.object == nil else { return false }
            gone.append(Gone(id: entry.id, lastSeen: entry.lastSeen))
            return true
        }
        for index in entries.indices { entries[index].lastSeen = now }
        return gone
    }

    /// The page clicks without a page of their own belong to: the most recently shown one still alive.
    var current: PageInfo? {
        entries.last { $0.object != nil }?.info
    }
}
