import SpoorSystem

/// An open file descriptor, closed when the last reference goes.
package final class OpenFile: @unchecked Sendable {
    // @unchecked: both fields are constants; the descriptor is closed once, by `deinit`.
    package let fd: Int32
    package let path: String
    package init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }
    deinit { FileIO.closeFile(fd) }
}

/// The segment files of one log and the index of their records: where each record sits, which records are
/// live, which file is appended to. A value the log keeps under its state lock; it touches no file. The log
/// plans a write here, writes outside the lock and commits the outcome here.
///
/// Only the holder of the log's writer lock starts a segment, changes ``active`` or commits a write, so a write
/// in flight always goes to the last segment (or to a new one not yet listed), and that segment is never
/// deleted while it is ``active``.
package struct Segments {
    /// Where one record sits in its segment.
    package struct RecordRef {
        package var offset: UInt32
        package var size: UInt32
    }

    /// A context record: where it sits in its segment and its payload (a `Batch.contexts` entry).
    package struct ContextRef {
        package var offset: UInt32
        package var payload: [UInt8]
    }

    /// One segment file and the index of its records.
    package struct Segment {
        package let id: UInt64
        /// Event records (context records are in `contexts`).
        package var records: ContiguousArray<RecordRef> = []
        /// Context records, in order. Kept while the segment lives, whatever the head: live records after
        /// the head may extend one before it.
        package var contexts: [ContextRef] = []
        /// The index of the first live record.
        package var head = 0
        /// The end of the valid bytes in the file.
        package var end = SegmentFormat.headerSize

        package var liveCount: Int { records.count - head }

        /// The payload of the context in effect for a record at `offset`: the last context record before it.
        package func context(before offset: UInt32) -> [UInt8]? {
            contexts.last { $0.offset < offset }?.payload
        }
    }

    /// Where one write group goes, decided under the state lock.
    package struct WritePlan {
        /// The segment written to.
        package var id: UInt64
        /// Its open file; nil when the write starts the segment (its file does not exist yet).
        package var file: OpenFile?
        /// Where the group starts in the file.
        package var start: Int
        /// The framed context record written in front of the group (the context in effect before it, restated
        /// where the segment does not end with it), or empty.
        package var lead: [UInt8]
        /// The payload of that context record.
        package var leadingContext: [UInt8]?
        /// The file of the segment this write leaves because it is full. The plan holds its last reference, so it
        /// is closed when the caller drops the plan, after the state lock is released (no system call under it).
        package var retired: OpenFile?

        package init(id: UInt64, file: OpenFile?, start: Int, lead: [UInt8], leadingContext: [UInt8]?) {
            self.id = id
            self.file = file
            self.start = start
            self.lead = lead
            self.leadingContext = leadingContext
        }
    }

    /// The segments, oldest first.
    package private(set) var list: [Segment] = []
    /// The file appended to: the last segment's, or nil when the next write starts a new segment.
    package var active: OpenFile?
    /// The id the next segment gets.
    package var nextID: UInt64 = 1
    /// The segment a write in progress is creating (its id taken, the segment not listed until the write
    /// commits). While nothing older is live, the head is its start: a head saved past it would have recovery
    /// delete the segment, records and all, as consumed.
    package private(set) var creating: UInt64?
    /// The payload of the context in effect after the last record appended (on disk or in memory): what a
    /// segment started for the next records restates first.
    package var tailContext: [UInt8]?
    /// Live records on disk, and their framed bytes.
    package private(set) var liveCount = 0
    package private(set) var liveBytes = 0

    package init() {}

    /// The position of the first live record on disk (or the end of the last segment).
    package var head: LogPosition {
        for segment in list where segment.liveCount > 0 {
            return LogPosition(segment: segment.id, offset: Int(segment.records[segment.head].offset))
        }
        if let last = list.last { return LogPosition(segment: last.id, offset: last.end) }
        return LogPosition(segment: creating ?? nextID, offset: 0)
    }

    /// The ids of the segments listed.
    package var ids: Set<UInt64> { Set(list.map(\.id)) }

    /// Adds a segment recovery rebuilt from its file; its records are live from `head` on.
    package mutating func adopt(_ segment: Segment) {
        liveCount += segment.liveCount
        liveBytes += segment.records[segment.head...].reduce(0) { $0 + Int($1.size) }
        nextID = max(nextID, segment.id + 1)
        list.append(segment)
    }

    // MARK: Writing

    /// Plans a write of `byteCount` bytes of framed records: to the active segment, or to a new one when there
    /// is none or the group would pass `segmentBytes`. A new segment's id is taken now.
    package mutating func planWrite(byteCount: Int, startsWithContext: Bool, leadingContext: [UInt8]?, segmentBytes: Int) -> WritePlan {
        // The last segment is read in place (`list[last]`), not copied: this runs on every append.
        let last = list.count - 1
        var retired: OpenFile?
        if active != nil, last >= 0, list[last].end > SegmentFormat.headerSize, list[last].end + byteCount > segmentBytes {
            retired = retireActive()
        }
        var plan: WritePlan
        if let active, last >= 0 {
            plan = WritePlan(id: list[last].id, file: active, start: list[last].end, lead: [], leadingContext: nil)
        } else {
            plan = WritePlan(id: nextID, file: nil, start: SegmentFormat.headerSize, lead: [], leadingContext: nil)
            creating = nextID
            nextID += 1
        }
        plan.retired = retired
        if let leadingContext, byteCount > 0, !startsWithContext,
           plan.file == nil || list[last].contexts.last?.payload != leadingContext {
            plan.lead = RecordFormat.frame(leadingContext)
            plan.leadingContext = leadingContext
        }
        return plan
    }

    /// Stops appending to the active segment; the next write starts a new one. Returns its file for the caller
    /// to drop once the state lock is released (closing a descriptor is a system call).
    package mutating func retireActive() -> OpenFile? {
        defer { active = nil }
        return active
    }

    /// Records a write that reached the file: `bytes` (framed records of `sizes`) went in after the plan's lead.
    /// A new segment becomes the active one. Returns the number of event records written.
    @discardableResult
    package mutating func commitWrite(_ plan: WritePlan, file: OpenFile, _ bytes: UnsafeRawBufferPointer, sizes: [UInt32]) -> Int {
        if plan.file == nil {
            list.append(Segment(id: plan.id))
            active = file
            creating = nil
        }
        let index = list.count - 1
        precondition(list[index].id == plan.id, "a write commits to the last segment")
        var offset = plan.start
        if let leadingContext = plan.leadingContext {
            list[index].contexts.append(ContextRef(offset: UInt32(offset), payload: leadingContext))
            offset += plan.lead.count
        }
        var at = 0
        var events = 0
        for size in sizes {
            if RecordFormat.isContext(bytes, at: at) {
                let payload = Array(bytes[(at + RecordFormat.headerSize)..<(at + Int(size))])
                list[index].contexts.append(ContextRef(offset: UInt32(offset), payload: payload))
            } else {
                list[index].records.append(RecordRef(offset: UInt32(offset), size: size))
                events += 1
                liveBytes += Int(size)
            }
            at += Int(size)
            offset += Int(size)
        }
        liveCount += events
        list[index].end = offset
        return events
    }

    /// Records a write that failed: its file is never written again. A segment the write created (its header
    /// written, no record) is listed, empty, so it is deleted like any consumed one.
    package mutating func commitFailure(_ plan: WritePlan, created: Bool) {
        if plan.file == nil, created { list.append(Segment(id: plan.id)) }
        if plan.file == nil { creating = nil }
        active = nil
    }

    // MARK: Consuming

    /// Drops the oldest live record on disk; returns false when there is none.
    package mutating func dropOldest() -> Bool {
        guard let index = list.firstIndex(where: { $0.liveCount > 0 }) else { return false }
        let ref = list[index].records[list[index].head]
        list[index].head += 1
        liveCount -= 1
        liveBytes -= Int(ref.size)
        return true
    }

    /// Marks every record consumed (an erase).
    package mutating func consumeAll() {
        for index in list.indices { list[index].head = list[index].records.count }
        liveCount = 0
        liveBytes = 0
    }

    /// Takes the live records of segment `index` up to (not including) record `last`, for a seal.
    package mutating func take(from index: Int, upTo last: Int) -> [RecordRef] {
        let refs = Array(list[index].records[list[index].head..<last])
        list[index].head = last
        liveCount -= refs.count
        liveBytes -= refs.reduce(0) { $0 + Int($1.size) }
        return refs
    }

    /// Puts back records a failed seal took from segment `id` at record `first`. If a cap dropped newer records
    /// of that segment meanwhile, the taken ones (older still) are not put back over them: returns false, and
    /// they count as dropped.
    package mutating func restore(segment id: UInt64, first: Int, _ refs: [RecordRef]) -> Bool {
        guard let index = list.firstIndex(where: { $0.id == id }), list[index].head == first + refs.count else { return false }
        list[index].head = first
        liveCount += refs.count
        liveBytes += refs.reduce(0) { $0 + Int($1.size) }
        return true
    }

    /// Removes from the index the consumed segments at the front whose id is below `limit` (an unfinished seal
    /// still reads from its start on), never the active one, and returns their ids: the caller deletes the
    /// files after the state lock is released.
    package mutating func removeConsumed(below limit: UInt64) -> [UInt64] {
        var removed: [UInt64] = []
        while let first = list.first, first.liveCount == 0, first.id < limit, !(active != nil && list.count == 1) {
            list.removeFirst()
            removed.append(first.id)
        }
        return removed
    }
}
