import Foundation
package import SpoorWire

extension EventLog {
    /// Replaces the pending batch `id` by `frames`, its parts in order (a batch split after a 413).
    ///
    /// The parts are written to the outbox (and forced to disk unless durability is ``Durability/none``) before
    /// the parent is removed, so a crash in between leaves the parent, whose split is redone with the same ids
    /// (`BatchID.derived(index:)`, in SpoorUpload); parts already pending are not added twice. Part `i` is filed at the
    /// parent's end position less the records of the parts after it, so the parts sort in order in the outbox
    /// and after the batches sealed before the parent.
    ///
    /// - Returns: the parts, as pending batches.
    @discardableResult
    package func replace(_ id: BatchID, withFrames frames: [[UInt8]]) throws(StorageError) -> [SealedBatch] {
        try sealing.withLock { () throws(StorageError) -> [SealedBatch] in
            let (found, closed, existing) = state.withLock { state in
                (state.outbox.entry(id), state.closed, Set(state.outbox.batches.map(\.id)))
            }
            if closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            guard let parent = found else { throw StorageError(.unknownBatch, path: outboxPath, reason: "no pending batch \(id)") }
            var parts: [Outbox.Entry] = []
            var recordsAfter = 0
            var headers: [FrameHeader] = []
            for frame in frames {
                do {
                    headers.append(try FrameDecoder(limits: FrameLimits(maxFrameBytes: .max, maxUncompressedBytes: .max, maxRecords: .max))
                        .decodeHeader(frame))
                } catch {
                    throw StorageError(.corruptFile, path: outboxPath, reason: "a part of batch \(id) is not a frame: \(error)")
                }
            }
            for (index, frame) in frames.enumerated().reversed() {
                let header = headers[index]
                let end = LogPosition(segment: parent.end.segment, offset: max(0, parent.end.offset - recordsAfter))
                recordsAfter += Int(header.recordCount)
                let info = SealedBatch(id: header.batchID, recordCount: Int(header.recordCount), codec: header.codec,
                                       frameBytes: frame.count, sealedAt: header.sealedAt, isDurable: parent.info.isDurable)
                if existing.contains(header.batchID) { continue }
                if let parentPath = parent.path {
                    // Beside the parent: the outbox, or `claimed` for a batch taken from another process's log.
                    let folder = String(parentPath[..<parentPath.lastIndex(of: "/")!])
                    let filePath = folder + "/" + StorageLayout.batchName(end: end, id: header.batchID)
                    try AtomicFile.write(frame, to: filePath, durable: configuration.durability != .none)
                    parts.append(Outbox.Entry(info: info, path: filePath, frame: nil, end: end))
                } else {
                    parts.append(Outbox.Entry(info: info, path: nil, frame: frame, end: end))
                }
            }
            parts.reverse()
            if let filePath = parent.path {
                try FileIO.unlink(filePath)
                if configuration.durability != .none { try FileIO.syncDirectory(outboxPath) }
            }
            return state.withLock { state in
                state.outbox.replace(id, with: parts)
                state.progress.version += 1
                return state.outbox.batches.filter { batch in headers.contains { $0.batchID == batch.id } }
            }
        }
    }

    /// Removes the pending batch `id` from the outbox after it was set aside (its frame kept in the rejected
    /// area): like ``release(_:)``, but counted in ``LogCounters/rejected`` instead of as released.
    package func discard(_ id: BatchID) throws(StorageError) {
        try release(id)
        state.withLock { state in
            state.counters.released -= 1
            state.counters.rejected += 1
        }
    }
}
