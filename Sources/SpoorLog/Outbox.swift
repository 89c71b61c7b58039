package import SpoorWire

/// The sealed batches waiting for upload, in log order: where each one's frame is kept and where its records
/// ended in the log. A value the log keeps under its state lock; it touches no file (the log writes and deletes
/// the batch files outside the lock).
package struct Outbox {
    /// A batch in the outbox.
    package struct Entry {
        package var info: SealedBatch
        /// The file holding the frame, or nil if it could only be kept in memory.
        package var path: String?
        /// The frame, when it is kept in memory only.
        package var frame: [UInt8]?
        /// The log position just past its last record.
        package var end: LogPosition

        package init(info: SealedBatch, path: String?, frame: [UInt8]?, end: LogPosition) {
            self.info = info
            self.path = path
            self.frame = frame
            self.end = end
        }
    }

    /// Oldest first.
    package private(set) var entries: [Entry] = []

    package init() {}

    package var count: Int { entries.count }

    /// The batches, oldest first.
    package var batches: [SealedBatch] { entries.map(\.info) }

    /// The batch `id`, if it is waiting.
    package func entry(_ id: BatchID) -> Entry? {
        entries.first { $0.info.id == id }
    }

    /// Adds a batch after the others (a seal, or recovery reading the outbox in log order).
    package mutating func add(_ entry: Entry) {
        entries.append(entry)
    }

    /// Removes the batch `id`; returns whether it was there.
    @discardableResult
    package mutating func remove(_ id: BatchID) -> Bool {
        guard let index = entries.firstIndex(where: { $0.info.id == id }) else { return false }
        entries.remove(at: index)
        return true
    }

    /// Puts `parts` in the place of batch `id` (a split).
    package mutating func replace(_ id: BatchID, with parts: [Entry]) {
        if let index = entries.firstIndex(where: { $0.info.id == id }) {
            entries.replaceSubrange(index...index, with: parts)
        }
    }

    /// Removes every batch and returns them (an erase).
    package mutating func removeAll() -> [Entry] {
        defer { entries = [] }
        return entries
    }
}
