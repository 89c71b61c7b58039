import Foundation
import Logging

import SpoorModel
public import SpoorWire

/// A batch sealed into the outbox, waiting for upload.
public struct SealedBatch: Sendable, Hashable {
    /// The batch id; the same on every retry and after restarts.
    public var id: BatchID
    /// The number of records in the batch.
    public var recordCount: Int
    /// How the payload is compressed.
    public var codec: Codec
    /// The size of the whole frame.
    public var frameBytes: Int
    /// When the batch was sealed, in milliseconds since the epoch.
    public var sealedAt: Int64
    /// Whether the frame is in the outbox on disk (false if the disk refused it and it is kept in memory).
    public var isDurable: Bool

    /// Describes a sealed batch (the log's seal and recovery make them; the upload rules' tests stand for them).
    package init(id: BatchID, recordCount: Int, codec: Codec, frameBytes: Int, sealedAt: Int64, isDurable: Bool) {
        self.id = id
        self.recordCount = recordCount
        self.codec = codec
        self.frameBytes = frameBytes
        self.sealedAt = sealedAt
        self.isDurable = isDurable
    }
}

extension EventLog {
    /// Cuts the oldest live records into a batch and seals it into the outbox.
    ///
    /// The batch takes at most `maxRecords` records and `maxBytes` bytes of
    /// payload (one record is always taken, however large). Its frame is written
    /// to the outbox (and forced to disk unless durability is ``Durability/none``)
    /// before the records leave the log, so a crash at any point loses nothing
    /// and duplicates nothing. If the disk refuses the frame, the batch is kept
    /// in memory (``SealedBatch/isDurable`` is false) and the failure counted.
    ///
    /// What the batch's events share travels once, as the context record they extend, which leads the payload.
    ///
    /// - Returns: the sealed batch, or nil if the log holds no records.
    /// - Throws: ``StorageError/Kind/outboxFull`` when ``Configuration/maxPendingBatches`` are waiting.
    @discardableResult
    public func seal(
        maxRecords: Int = 100, maxBytes: Int = 512 << 10, codec: Codec = .preferred
    ) throws(StorageError) -> SealedBatch? {
        var messages = LogMessages()
        defer { messages.emit(to: logger) }
        return try sealing.withLock { () throws(StorageError) -> SealedBatch? in
            let limits = (records: max(1, maxRecords), bytes: max(1, maxBytes))
            // Records held in memory (the disk failing) are taken holding the writer lock too, so that writing
            // them out to a segment never overlaps a seal taking or putting them back; otherwise appends go on.
            if state.withLock({ state in state.memory.count > 0 }) {
                return try writing.withLock { () throws(StorageError) -> SealedBatch? in
                    try sealHoldingLocks(maxRecords: limits.records, maxBytes: limits.bytes, codec: codec, fromMemory: true, messages: &messages)
                }
            }
            return try sealHoldingLocks(maxRecords: limits.records, maxBytes: limits.bytes, codec: codec, fromMemory: false, messages: &messages)
        }
    }

    /// Records a seal took from one segment.
    private struct Take {
        var segment: UInt64
        /// The index of the first record taken, to put them back if the seal fails.
        var first: Int
        /// A copy, so the segment's index is not shared while appends go on.
        var refs: [Segments.RecordRef]
    }

    /// What a seal took, under the state lock.
    private struct Taken {
        var takes: [Take]
        var memory: [MemoryFallback.Record]
        /// The context the batch's records extend.
        var context: [UInt8]?
        var end: LogPosition
    }

    private func sealHoldingLocks(
        maxRecords: Int, maxBytes: Int, codec: Codec, fromMemory: Bool, messages: inout LogMessages
    ) throws(StorageError) -> SealedBatch? {
        // Under the state lock: take committed records off the head. Reading and compressing happen outside it.
        let taken = try state.withLock { (state: inout LogState) throws(StorageError) -> Taken? in
            if state.closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            guard state.outbox.count < configuration.maxPendingBatches else {
                throw StorageError(.outboxFull, path: outboxPath, reason: "\(state.outbox.count) batches are waiting for upload")
            }
            guard state.recordCount > 0 else { return nil }
            let start = state.segments.head
            var end = start
            var count = 0
            var bytes = 0
            var takes: [Take] = []
            // A batch stores one context: it ends where the context in effect changes (rarely: a login, new
            // super properties, a new session). Contexts are compared by bytes only where the context changes.
            var context: [UInt8]?
            func fits(_ size: Int) -> Bool {
                count < maxRecords && (count == 0 || bytes + size - RecordFormat.headerSize <= maxBytes)
            }
            func sameContext(_ next: [UInt8]?) -> Bool {
                if count == 0 { context = next }
                return next == context
            }
            for index in state.segments.list.indices where state.segments.list[index].liveCount > 0 {
                let segment = state.segments.list[index]
                var last = segment.head
                var contextIndex = segment.contexts.lastIndex { $0.offset < segment.records[last].offset }
                guard sameContext(contextIndex.map { segment.contexts[$0].payload }) else { break }
                while last < segment.records.count, fits(Int(segment.records[last].size)) {
                    let ref = segment.records[last]
                    let next = (contextIndex ?? -1) + 1
                    if next < segment.contexts.count, segment.contexts[next].offset < ref.offset {
                        contextIndex = segment.contexts.lastIndex { $0.offset < ref.offset }
                        guard sameContext(segment.contexts[contextIndex!].payload) else { break }
                    }
                    bytes += Int(ref.size) - RecordFormat.headerSize
                    count += 1
                    last += 1
                }
                guard last > segment.head else { break }
                let refs = state.segments.take(from: index, upTo: last)
                takes.append(Take(segment: segment.id, first: segment.head, refs: refs))
                end = LogPosition(segment: segment.id, offset: Int(refs.last!.offset + refs.last!.size))
                if last < segment.records.count { break }
            }
            var memory: [MemoryFallback.Record] = []
            if fromMemory, takes.isEmpty || count < maxRecords, state.segments.liveCount == 0 {
                while let record = state.memory.first, fits(record.framed.count), sameContext(record.context) {
                    bytes += record.framed.count - RecordFormat.headerSize
                    count += 1
                    memory.append(record)
                    state.memory.removeFirst()
                }
            }
            guard !takes.isEmpty || !memory.isEmpty else { return nil }
            state.inflightStart = start
            return Taken(takes: takes, memory: memory, context: context, end: end)
        }
        guard let taken else { return nil }

        // The context first: a reader of the batch meets it before the events that extend it.
        var payload: [UInt8] = taken.context ?? []
        var count = 0
        for take in taken.takes {
            let segmentPath = path + "/" + StorageLayout.segmentName(id: take.segment)
            let first = Int(take.refs.first!.offset)
            let last = take.refs.last!
            do {
                let fd = try FileIO.open(segmentPath, O_RDONLY)
                defer { FileIO.closeFile(fd) }
                let bytes = try FileIO.pread(fd, count: Int(last.offset + last.size) - first, at: first, path: segmentPath)
                for ref in take.refs {
                    if let record = Self.payload(bytes, at: Int(ref.offset) - first) {
                        payload.append(contentsOf: record)
                        count += 1
                    } else {
                        noteCorrupt(segment: take.segment, offset: Int(ref.offset), messages: &messages)
                    }
                }
            } catch {
                // Unreadable now: put the records back and let a later seal try again.
                restore(taken)
                throw error
            }
        }
        for record in taken.memory {
            payload.append(contentsOf: record.framed[RecordFormat.headerSize...])
            count += 1
        }

        let id = BatchID.random()
        let sealedAt = configuration.now()
        let frame: [UInt8]
        do {
            frame = try BatchFrame.encode(
                payload: payload, recordCount: count, batchID: id, sealedAt: sealedAt, codec: codec)
        } catch {
            restore(taken)
            throw StorageError(.ioFailure, path: outboxPath, reason: "cannot encode the batch: \(error)")
        }
        guard count > 0 else {
            // Every record taken was corrupt: they are gone, and so is the batch.
            deleteSegments(state.withLock { state in
                state.inflightStart = nil
                state.progress.version += 1
                return collectGarbage(&state)
            }, messages: &messages)
            return nil
        }

        var info = SealedBatch(id: id, recordCount: count, codec: codec, frameBytes: frame.count, sealedAt: sealedAt, isDurable: true)
        let name = StorageLayout.batchName(end: taken.end, id: id)
        let filePath = outboxPath + "/" + name
        var entry = Outbox.Entry(info: info, path: filePath, frame: nil, end: taken.end)
        var failed = false
        do {
            if let unsynced = try AtomicFile.replace(frame, at: filePath, durable: configuration.durability != .none) {
                // The frame is in the outbox: it stays listed there (so a release or an erase removes it), but a
                // power cut may yet lose its name, so it is not reported durable.
                messages.add(.error, "spoor: a sealed batch is in the outbox, but its folder could not be synced", ["error": "\(unsynced)"])
                info.isDurable = false
                entry = Outbox.Entry(info: info, path: filePath, frame: nil, end: taken.end)
                failed = true
            }
        } catch {
            messages.add(.error, "spoor: cannot write a sealed batch to the outbox; keeping it in memory", ["error": "\(error)"])
            info.isDurable = false
            entry = Outbox.Entry(info: info, path: nil, frame: frame, end: taken.end)
            failed = true
        }
        deleteSegments(state.withLock { state in
            if failed { state.counters.writeErrors += 1 }
            state.inflightStart = nil
            state.outbox.add(entry)
            state.counters.sealed += 1
            state.progress.version += 1
            return collectGarbage(&state)
        }, messages: &messages)
        return info
    }

    /// Puts taken records back at the head (the seal failed before anything was written). Records a cap dropped
    /// the newer neighbours of meanwhile are not put back: they count as dropped, as the oldest records would
    /// have been.
    private func restore(_ taken: Taken) {
        state.withLock { state in
            state.inflightStart = nil
            for take in taken.takes where !state.segments.restore(segment: take.segment, first: take.first, take.refs) {
                state.counters.dropped += UInt64(take.refs.count)
                state.progress.version += 1
            }
            if !taken.memory.isEmpty { state.memory.restore(taken.memory) }
        }
    }

    /// The sealed batches waiting for upload, oldest first.
    public func pendingBatches() -> [SealedBatch] {
        state.withLock { state in state.outbox.batches }
    }

    /// The frame of a pending batch, exactly as it is to be sent.
    public func frame(of id: BatchID) throws(StorageError) -> [UInt8] {
        let pending = state.withLock { state in state.outbox.entry(id) }
        guard let pending else { throw StorageError(.unknownBatch, path: outboxPath, reason: "no pending batch \(id)") }
        if let frame = pending.frame { return frame }
        let read = Result { () throws(StorageError) in try FileIO.readFile(pending.path!, limit: Int(UInt32.max)) }
        switch read {
        case .success(let frame):
            return frame
        case .failure(let error) where error.code == ENOENT:
            // Another process sharing the storage directory claimed it (renamed it into its own `claimed`
            // folder): it uploads it now. Not lost, not released here: forgotten, and counted.
            state.withLock { state in
                if state.outbox.remove(id) { state.counters.claimedAway += 1 }
            }
            throw StorageError(.unknownBatch, path: outboxPath, reason: "batch \(id) was claimed by another process")
        case .failure(let error):
            throw error
        }
    }

    /// Removes a batch from the outbox for good, after its upload succeeded.
    ///
    /// The log's state is persisted first, so the released records can never
    /// come back after a restart.
    public func release(_ id: BatchID) throws(StorageError) {
        let unsynced = try sealing.withLock { () throws(StorageError) -> StorageError? in
            let (found, closed, persisted) = state.withLock { state in
                (state.outbox.entry(id), state.closed, state.progress.persistedHead)
            }
            if closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            guard let found else { throw StorageError(.unknownBatch, path: outboxPath, reason: "no pending batch \(id)") }
            if persisted < found.end {
                try syncFiles(persistState: true, wait: true)
            }
            var unsynced: StorageError?
            if let filePath = found.path {
                try FileIO.unlink(filePath)  // a file already gone counts as removed
                // Once the file is gone, the batch leaves the index whatever the folder's sync says: listed but
                // missing, it would stop every upload after it. A power cut may bring it back; the collector
                // knows its id.
                if configuration.durability != .none {
                    do throws(StorageError) { try FileIO.syncDirectory(outboxPath) } catch { unsynced = error }
                }
            }
            state.withLock { state in
                state.outbox.remove(id)
                state.counters.released += 1
                if unsynced != nil { state.counters.writeErrors += 1 }
                state.progress.version += 1
            }
            return unsynced
        }
        if let unsynced {
            var messages = LogMessages()
            messages.add(.error, "spoor: a released batch is gone, but the outbox folder could not be synced", ["error": "\(unsynced)"])
            messages.emit(to: logger)
        }
    }
}
