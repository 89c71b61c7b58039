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
        try sealing.withLock { () throws(StorageError) -> SealedBatch? in
            try sealLocked(maxRecords: max(1, maxRecords), maxBytes: max(1, maxBytes), codec: codec)
        }
    }

    private struct Take {
        var segment: UInt64
        /// The index of the first record taken, to put them back if the seal fails.
        var first: Int
        /// A copy, so the segment's index is not shared while appends go on.
        var refs: [RecordRef]
    }

    private func sealLocked(maxRecords: Int, maxBytes: Int, codec: Codec) throws(StorageError) -> SealedBatch? {
        // Under the lock: take records off the head. Reading and compressing happen outside it.
        let taken = try state.withLock { (state: inout State) throws(StorageError) -> (takes: [Take], memory: [MemoryRecord], context: [UInt8]?, start: LogPosition, end: LogPosition)? in
            if state.closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            guard state.pending.count < configuration.maxPendingBatches else {
                throw StorageError(.outboxFull, path: outboxPath, reason: "\(state.pending.count) batches are waiting for upload")
            }
            guard state.recordCount > 0 else { return nil }
            let start = headPosition(&state)
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
            func sameContext(_ state: inout State, _ next: [UInt8]?) -> Bool {
                if count == 0 { context = next }
                return next == context
            }
            for index in state.segments.indices where state.segments[index].liveCount > 0 {
                let segment = state.segments[index]
                var last = segment.head
                var contextIndex = segment.contexts.lastIndex { $0.offset < segment.records[last].offset }
                guard sameContext(&state, contextIndex.map { segment.contexts[$0].payload }) else { break }
                while last < segment.records.count, fits(Int(segment.records[last].size)) {
                    let ref = segment.records[last]
                    let next = (contextIndex ?? -1) + 1
                    if next < segment.contexts.count, segment.contexts[next].offset < ref.offset {
                        contextIndex = segment.contexts.lastIndex { $0.offset < ref.offset }
                        guard sameContext(&state, segment.contexts[contextIndex!].payload) else { break }
                    }
                    bytes += Int(ref.size) - RecordFormat.headerSize
                    count += 1
                    last += 1
                }
                guard last > segment.head else { break }
                let refs = Array(segment.records[segment.head..<last])
                takes.append(Take(segment: segment.id, first: segment.head, refs: refs))
                let taken = refs.reduce(0) { $0 + Int($1.size) }
                state.segments[index].head = last
                state.liveBytes -= taken
                state.recordCount -= refs.count
                end = LogPosition(segment: segment.id, offset: Int(refs.last!.offset + refs.last!.size))
                if last < segment.records.count { break }
            }
            var memory: [MemoryRecord] = []
            if takes.isEmpty || count < maxRecords, state.segments.allSatisfy({ $0.liveCount == 0 }) {
                while state.memoryCount > 0, fits(state.memory[state.memoryStart].framed.count),
                      sameContext(&state, state.memory[state.memoryStart].context) {
                    let record = state.memory[state.memoryStart]
                    bytes += record.framed.count - RecordFormat.headerSize
                    count += 1
                    memory.append(record)
                    removeFirstInMemory(&state)
                }
            }
            state.inflightStart = start
            return (takes, memory, context, start, end)
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
                        noteCorrupt(segment: take.segment, offset: Int(ref.offset))
                    }
                }
            } catch {
                // Unreadable now: put the records back and let a later seal try again.
                state.withLock { state in
                    state.inflightStart = nil
                    restore(&state, taken.takes, memory: taken.memory)
                }
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
            state.withLock { state in
                state.inflightStart = nil
                restore(&state, taken.takes, memory: taken.memory)
            }
            throw StorageError(.ioFailure, path: outboxPath, reason: "cannot encode the batch: \(error)")
        }
        guard count > 0 else {
            // Every record taken was corrupt: they are gone, and so is the batch.
            state.withLock { state in
                state.inflightStart = nil
                state.stateVersion += 1
                collectGarbage(&state)
            }
            return nil
        }

        var info = SealedBatch(id: id, recordCount: count, codec: codec, frameBytes: frame.count, sealedAt: sealedAt, isDurable: true)
        let name = StorageLayout.batchName(end: taken.end, id: id)
        let filePath = outboxPath + "/" + name
        var pending = Pending(info: info, path: filePath, frame: nil, end: taken.end)
        do {
            try AtomicFile.write(frame, to: filePath, durable: configuration.durability != .none)
        } catch {
            logger.error("spoor: cannot write a sealed batch to the outbox; keeping it in memory", metadata: ["error": "\(error)"])
            info.isDurable = false
            pending = Pending(info: info, path: nil, frame: frame, end: taken.end)
            state.withLock { state in state.counters.writeErrors += 1 }
        }
        state.withLock { state in
            state.inflightStart = nil
            state.pending.append(pending)
            state.counters.sealed += 1
            state.stateVersion += 1
            collectGarbage(&state)
        }
        return info
    }

    /// Puts taken records back at the head (the seal failed before anything was written).
    private func restore(_ state: inout State, _ takes: [Take], memory: [MemoryRecord]) {
        for take in takes {
            guard let index = state.segments.firstIndex(where: { $0.id == take.segment }) else { continue }
            state.segments[index].head = take.first
            state.recordCount += take.refs.count
            state.liveBytes += take.refs.reduce(0) { $0 + Int($1.size) }
        }
        if !memory.isEmpty {
            state.memory.replaceSubrange(state.memoryStart..<state.memoryStart, with: memory)
            state.memoryBytes += memory.reduce(0) { $0 + $1.framed.count }
            state.recordCount += memory.count
            state.liveBytes += memory.reduce(0) { $0 + $1.framed.count }
        }
    }

    /// The sealed batches waiting for upload, oldest first.
    public func pendingBatches() -> [SealedBatch] {
        state.withLock { state in state.pending.map { $0.info } }
    }

    /// The frame of a pending batch, exactly as it is to be sent.
    public func frame(of id: BatchID) throws(StorageError) -> [UInt8] {
        let pending = state.withLock { state in state.pending.first { $0.info.id == id } }
        guard let pending else { throw StorageError(.unknownBatch, path: outboxPath, reason: "no pending batch \(id)") }
        if let frame = pending.frame { return frame }
        return try FileIO.readFile(pending.path!, limit: Int(UInt32.max))
    }

    /// Removes a batch from the outbox for good, after its upload succeeded.
    ///
    /// The log's state is persisted first, so the released records can never
    /// come back after a restart.
    public func release(_ id: BatchID) throws(StorageError) {
        try sealing.withLock { () throws(StorageError) in
            let (found, closed) = state.withLock { state in (state.pending.first { $0.info.id == id }, state.closed) }
            if closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            guard let found else { throw StorageError(.unknownBatch, path: outboxPath, reason: "no pending batch \(id)") }
            let persisted = state.withLock { state in state.persistedHead }
            if persisted < found.end {
                try syncFiles(persistState: true, wait: true)
            }
            if let filePath = found.path {
                try FileIO.unlink(filePath)
                if configuration.durability != .none { try FileIO.syncDirectory(outboxPath) }
            }
            state.withLock { state in
                state.pending.removeAll { $0.info.id == id }
                state.counters.released += 1
                state.stateVersion += 1
            }
        }
    }
}
