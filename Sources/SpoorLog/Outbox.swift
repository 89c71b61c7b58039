import SpoorWire

/// The sealed batches waiting for upload, in log order: where each one's frame is kept and where its records
/// ended in the log. A value the log keeps under its state lock; it touches no file (the log writes and deletes
/// the batch files outside the lock).
struct Outbox {
    /// A batch in the outbox.
    struct Entry {
        var info: SealedBatch
        /// The file holding the frame, or nil if it could only be kept in memory.
        var path: String?
        /// The frame, when it is kept in memory only.
        var frame: [UInt8]?
        /// The log position just past its last record.
        var end: LogPosition
    }

    /// Oldest first.
    private(set) var entries: [Entry] = []

    var count: Int { entries.count }

    /// The batches, oldest first.
    var batches: [SealedBatch] { entries.map(\.info) }

    /// The batch `id`, if it is waiting.
    func entry(_ id: BatchID) -> Entry? {
        entries.first { $0.info.id == id }
    }

    /// Adds a batch after the others (a seal, or recovery reading the outbox in log order).
    mutating func add(_ entry: Entry) {
        entries.append(entry)
    }

    /// Removes the batch `id`; returns whether it was there.
    @discardableResult
    mutating func remove(_ id: BatchID) -> Bool {
        guard let index = entries.firstIndex(where: { $0.info.id == id }) else { return false }
        entries.remove(at: index)
        return true
    }

    /// Puts `parts` in the place of batch `id` (a split).
    mutating func replace(_ id: BatchID, with parts: [Entry]) {
        if let index = entries.firstIndex(where: { $0.info.id == id }) {
            entries.replaceSubrange(index...index, with: parts)
        }
    }

    /// Removes every batch and returns them (an erase).
    mutating func removeAll() -> [Entry] {
        defer { entries = [] }
        return entries
    }
}
