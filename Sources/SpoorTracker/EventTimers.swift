/// Identifies one running event timer; several timers with the same event name can run at once.
public struct TimerID: Sendable, Hashable, CustomStringConvertible {
    /// The event the timer will emit.
    public let eventName: String
    /// Tells apart timers with the same name.
    public let serial: UInt64

    public var description: String { "\(eventName)#\(serial)" }
}

/// Event timers on the monotonic clock (docs/events.md, "Event timers"). Not thread-safe: the tracker guards it with a lock.
struct EventTimers {
    private struct Entry {
        var accumulated: UInt64 = 0
        var runningSince: UInt64?
        var pausedByUser = false
    }

    private var entries: [TimerID: Entry] = [:]
    private var nextSerial: UInt64 = 1
    /// True while the app is ended (in the background): timers do not run.
    private(set) var appPaused = false

    var count: Int { entries.count }

    mutating func start(_ name: String, at now: UInt64) -> TimerID {
        let id = TimerID(eventName: name, serial: nextSerial)
        nextSerial += 1
        entries[id] = Entry(runningSince: appPaused ? nil : now)
        return id
    }

    mutating func pause(_ id: TimerID, at now: UInt64) -> Bool {
        guard var entry = entries[id] else { return false }
        entry.pausedByUser = true
        if let since = entry.runningSince {
            entry.accumulated += now &- since
            entry.runningSince = nil
        }
        entries[id] = entry
        return true
    }

    mutating func resume(_ id: TimerID, at now: UInt64) -> Bool {
        guard var entry = entries[id] else { return false }
        entry.pausedByUser = false
        if entry.runningSince == nil, !appPaused { entry.runningSince = now }
        entries[id] = entry
        return true
    }

    /// Removes the timer and returns the nanoseconds it ran, or `nil` when there is no such timer.
    mutating func end(_ id: TimerID, at now: UInt64) -> UInt64? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        return entry.accumulated + (entry.runningSince.map { now >= $0 ? now - $0 : 0 } ?? 0)
    }

    mutating func remove(_ id: TimerID) -> Bool { entries.removeValue(forKey: id) != nil }

    mutating func clear() { entries.removeAll() }

    /// The app ended: every running timer stops counting.
    mutating func pauseAll(at now: UInt64) {
        guard !appPaused else { return }
        appPaused = true
        for (id, var entry) in entries {
            if let since = entry.runningSince {
                entry.accumulated += now >= since ? now - since : 0
                entry.runningSince = nil
                entries[id] = entry
            }
        }
    }

    /// The app started again: timers the user did not pause run again.
    mutating func resumeAll(at now: UInt64) {
        guard appPaused else { return }
        appPaused = false
        for (id, var entry) in entries where !entry.pausedByUser && entry.runningSince == nil {
            entry.runningSince = now
            entries[id] = entry
        }
    }
}
