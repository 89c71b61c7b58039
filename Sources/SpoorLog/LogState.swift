/// Everything an open log knows, kept under its state lock; each part is owned by its own type. None of them
/// touches a file: the log plans under the lock, does the I/O outside it and commits the outcome.
package struct LogState {
    /// The segment files and the index of their records.
    package var segments = Segments()
    /// Records held in memory while the disk fails, and what the log knows of the failure.
    package var memory = MemoryFallback()
    /// Sealed batches waiting for upload.
    package var outbox = Outbox()
    /// What the state file and the fsyncs have caught up with.
    var progress = LogStateFile.Progress()
    package var counters = LogCounters()
    /// Where an unfinished seal started taking records: the persisted head never passes it, and no segment from
    /// it on is deleted.
    package var inflightStart: LogPosition?
    package var closed = false
    /// The directory's lock file, held (`flock`) while the log is open.
    package var lockFile: OpenFile?
    /// Records dropped by the caps since the last message about it, and when that message went out.
    package var droppedSinceMessage: UInt64 = 0
    package var lastDropMessage: Int64?

    /// The number of live records: on disk and held in memory, not yet sealed.
    package var recordCount: Int { segments.liveCount + memory.count }
    /// The bytes of live framed records (headers included).
    package var liveBytes: Int { segments.liveBytes + memory.bytes }
    /// The head to persist: the first live record, or where an unfinished seal started if that is before it.
    package var persistableHead: LogPosition {
        let head = segments.head
        return inflightStart.map { min($0, head) } ?? head
    }
}
