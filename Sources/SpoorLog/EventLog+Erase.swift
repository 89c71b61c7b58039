import Foundation

/// What ``EventLog/eraseAll()`` removed.
package struct ErasedLogContents: Sendable, Hashable {
    /// Live records (not yet sealed) removed.
    package var records: Int
    /// Sealed batches removed from the outbox.
    package var batches: Int
    /// Files moved aside as damaged (`.bad`) that were deleted.
    package var quarantinedFiles: Int

    /// Creates a summary.
    package init(records: Int = 0, batches: Int = 0, quarantinedFiles: Int = 0) {
        self.records = records
        self.batches = batches
        self.quarantinedFiles = quarantinedFiles
    }
}

extension EventLog {
    /// Removes every record, every sealed batch and every damaged file kept aside, durably: the new head is
    /// persisted before the files go, so nothing erased comes back after a crash. The log stays open and
    /// usable. Counters are kept (they hold no user data).
    package func eraseAll() throws(StorageError) -> ErasedLogContents {
        try sealing.withLock { () throws(StorageError) -> ErasedLogContents in
            var erased = ErasedLogContents()
            let (closed, pending) = state.withLock { (state: inout State) -> (Bool, [Pending]) in
                guard !state.closed else { return (true, []) }
                erased.records = state.recordCount
                for index in state.segments.indices { state.segments[index].head = state.segments[index].records.count }
                state.memory = []
                state.memoryStart = 0
                state.memoryBytes = 0
                state.recordCount = 0
                state.liveBytes = 0
                // `tailContext` stays: it is the writer's current state, not stored data, and the writer's next
                // events extend it; the fresh segment restates it before them.
                let pending = state.pending
                state.pending = []
                state.stateVersion += 1
                // A fresh segment, so the one that held the erased records can be deleted too.
                if !state.memoryOnly, !state.diskFailing, (try? startSegment(&state)) == nil {
                    state.counters.writeErrors += 1
                }
                return (false, pending)
            }
            if closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            // The head moves past everything before any file goes.
            try syncFiles(persistState: true, wait: true)
            state.withLock { state in collectGarbage(&state) }
            for batch in pending {
                if let filePath = batch.path { try FileIO.unlink(filePath) }
                erased.batches += 1
            }
            for directory in [path, outboxPath] {
                for name in (try? FileIO.list(directory)) ?? [] where name.hasSuffix(StorageLayout.quarantineSuffix) {
                    try FileIO.unlink(directory + "/" + name)
                    erased.quarantinedFiles += 1
                }
            }
            try syncFiles(persistState: true, wait: true)
            try? FileIO.syncDirectory(outboxPath)
            return erased
        }
    }
}
