import Foundation
import SpoorSystem

/// What ``EventLog/eraseAll()`` removed.
public struct ErasedLogContents: Sendable, Hashable {
    /// Live records (not yet sealed) removed.
    public var records: Int
    /// Sealed batches removed from the outbox.
    public var batches: Int
    /// Files moved aside as damaged (`.bad`) that were deleted.
    public var quarantinedFiles: Int

    /// Creates a summary.
    public init(records: Int = 0, batches: Int = 0, quarantinedFiles: Int = 0) {
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
        // The writer lock too: an append in progress finishes (and is erased), and none starts meanwhile.
        var messages = LogMessages()
        defer { messages.emit(to: logger) }
        return try sealing.withLock { () throws(StorageError) -> ErasedLogContents in
            try writing.withLock { () throws(StorageError) -> ErasedLogContents in try eraseHoldingLocks(messages: &messages) }
        }
    }

    /// Notes in this log's `owner` that it has followed `count` erasures of the stored data (a shared log only): an
    /// adopter erases a log that followed fewer than were made, rather than send what it holds.
    package func noteErasuresFollowed(_ count: UInt64) {
        guard shared != nil else { return }
        // One rewrite at a time (an opt-out's and the writer's may meet), and the count never goes back.
        Self.ownerRewrites.withLock {
            guard count > SharedLogArea.erasuresFollowed(path) else { return }
            do {
                try AtomicFile.write(SharedLogArea.ownerRecord(erasures: count), to: path + "/" + StorageLayout.ownerName,
                                     durable: configuration.durability != .none)
            } catch {
                logger.error("spoor: the log's owner file could not be updated after an erasure", metadata: ["error": "\(error)"])
            }
        }
    }

    private static let ownerRewrites = Locked()

    /// Erases the logs of processes that are gone from the shared area, whole (``SharedLogArea/erase(_:configuration:logger:)``):
    /// with ``eraseAll()``, what a user's request to erase the stored data means where several processes share the
    /// storage directory. The logs of running processes are theirs to erase. Returns what was erased.
    package func eraseGoneLogs() -> ErasedLogContents {
        var erased = ErasedLogContents()
        guard let shared else { return erased }
        for member in shared.members() where member.path != path && shared.isGone(member) {
            guard let part = shared.erase(member, configuration: configuration, logger: logger) else { continue }
            erased.records += part.records
            erased.batches += part.batches
            erased.quarantinedFiles += part.quarantinedFiles
        }
        // Emptied logs set aside for their damaged files, and the batches the collector refused: events too.
        for name in shared.setAside() {
            erased.quarantinedFiles += Self.removeTree(shared.folder + "/" + name)
        }
        let rejected = shared.folder + "/" + StorageLayout.rejectedFolderName
        let rejectedNames = FileIO.isDirectory(rejected) ? (try? FileIO.list(rejected)) ?? [] : []
        for name in rejectedNames where StorageLayout.rejected(fromName: name) != nil {
            if (try? FileIO.unlink(rejected + "/" + name)) != nil { erased.batches += 1 }
        }
        return erased
    }

    /// Deletes the folder at `path` and everything in it; the files deleted. No symbolic link is followed, `path`
    /// itself included: a link is never a folder here, so only the link would go, never what it points to.
    private static func removeTree(_ path: String) -> Int {
        guard FileIO.isDirectory(path) else { return 0 }
        var removed = 0
        for name in (try? FileIO.list(path)) ?? [] {
            let child = path + "/" + name
            var info = stat()
            guard lstat(child, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                removed += removeTree(child)
            } else if (try? FileIO.unlink(child)) != nil {
                removed += 1
            }
        }
        _ = path.withCString { rmdir($0) }
        return removed
    }

    private func eraseHoldingLocks(messages: inout LogMessages) throws(StorageError) -> ErasedLogContents {
        var erased = ErasedLogContents()
        var retired: OpenFile?
        let (closed, batches) = state.withLock { (state: inout LogState) -> (Bool, [Outbox.Entry]) in
            guard !state.closed else { return (true, []) }
            erased.records = state.recordCount
            state.segments.consumeAll()
            state.memory.removeAll()
            // `tailContext` stays: it is the writer's current state, not stored data, and the writer's next
            // events extend it; the fresh segment restates it before them.
            // The next append starts a fresh segment, so the one that held the erased records can be deleted too.
            retired = state.segments.retireActive()
            state.progress.version += 1
            return (false, state.outbox.removeAll())
        }
        // Its file is closed here, outside the state lock.
        withExtendedLifetime(retired) {}
        if closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
        // The head moves past everything before any file goes.
        try syncFiles(persistState: true, wait: true)
        deleteSegments(state.withLock { state in collectGarbage(&state) }, messages: &messages)
        for batch in batches {
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
