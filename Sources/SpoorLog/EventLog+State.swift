extension EventLog {
    /// Where one record sits in its segment.
    struct RecordRef {
        var offset: UInt32
        var size: UInt32
    }

    /// A context record: where it sits in its segment and its payload (a `Batch.contexts` entry).
    struct ContextRef {
        var offset: UInt32
        var payload: [UInt8]
    }

    /// An event record held in memory while the disk fails, with the context in effect for it.
    struct MemoryRecord {
        var framed: [UInt8]
        var context: [UInt8]?
    }

    /// One segment file and the index of its records.
    struct Segment {
        let id: UInt64
        /// Event records (context records are in `contexts`).
        var records: ContiguousArray<RecordRef> = []
        /// Context records, in order. Kept while the segment lives, whatever the head: live records after
        /// the head may extend one before it.
        var contexts: [ContextRef] = []
        /// The index of the first live record.
        var head = 0
        /// The end of the valid bytes in the file.
        var end = SegmentFormat.headerSize

        var liveCount: Int { records.count - head }

        /// The payload of the context in effect for a record at `offset`: the last context record before it.
        func context(before offset: UInt32) -> [UInt8]? {
            contexts.last { $0.offset < offset }?.payload
        }
    }

    /// An open file descriptor, closed when the last reference goes.
    package final class OpenFile: @unchecked Sendable {
        let fd: Int32
        let path: String
        init(fd: Int32, path: String) {
            self.fd = fd
            self.path = path
        }
        deinit { FileIO.closeFile(fd) }
    }

    /// A batch in the outbox.
    struct Pending {
        var info: SealedBatch
        /// The file holding the frame, or nil if it could only be kept in memory.
        var path: String?
        /// The frame, when it is kept in memory only.
        var frame: [UInt8]?
        /// The log position just past its last record.
        var end: LogPosition
    }

    package struct State {
        var segments: [Segment] = []
        /// The segment appended to; always the last of `segments`.
        package var active: OpenFile?
        var nextSegmentID: UInt64 = 1
        /// Event records not on disk, oldest first, from `memoryStart`.
        var memory: [MemoryRecord] = []
        var memoryStart = 0
        /// The payload of the context in effect after the last record appended (on disk or in memory): what a
        /// segment started for the next records restates first.
        var tailContext: [UInt8]?
        var memoryBytes = 0
        var recordCount = 0
        var liveBytes = 0
        var counters = LogCounters()
        /// Where an unfinished seal started taking records; the persisted head never passes it.
        var inflightStart: LogPosition?
        var persistedHead = LogPosition(segment: 0, offset: 0)
        var stateVersion: UInt64 = 0
        var persistedVersion: UInt64 = 0
        /// The disk failed; retry at `retryAt`.
        package var diskFailing = false
        package var retryAt: Int64 = 0
        /// The last disk failure, for `sync()` to report.
        var lastError: StorageError?
        /// The directory could not be set up at all: memory only, for good.
        var memoryOnly = false
        /// Segments written since the last sync.
        var unsynced: Set<UInt64> = []
        var directoryDirty = false
        var lastSync: Int64 = 0
        var pending: [Pending] = []
        var closed = false
        var droppedSinceLog: UInt64 = 0
        var lastDropLog: Int64?
        var lockFile: OpenFile?
        /// Corrupt regions too short to pad over, already counted; kept in the state file.
        var shortRegions: Set<LogPosition> = []

        package var memoryCount: Int { memory.count - memoryStart }
    }

}
