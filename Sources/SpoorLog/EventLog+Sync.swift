import Foundation
import SpoorSystem

extension EventLog {
    /// Forces written segments (and the directory) to disk and, if asked, persists the state file.
    ///
    /// - Parameters:
    ///   - wait: wait for a sync already running; otherwise skip if one is.
    ///   - force: fsync even when durability is `.none` (for `sync()` and state writes).
    func syncFiles(persistState: Bool, wait: Bool, force: Bool = true) throws(StorageError) {
        if wait {
            try syncing.withLock { () throws(StorageError) in try syncHoldingSyncLock(persistState: persistState, force: force) }
        } else {
            try syncing.withLockIfAvailable { () throws(StorageError) in try syncHoldingSyncLock(persistState: persistState, force: force) }
        }
    }

    private func syncHoldingSyncLock(persistState: Bool, force: Bool) throws(StorageError) {
        // Once closed, the directory may be another log's: this one writes nothing there again.
        typealias Pending = (ids: Set<UInt64>, directoryDirty: Bool, stateBytes: [UInt8]?, head: LogPosition, version: UInt64)
        guard let (ids, directoryDirty, stateBytes, head, version) = state.withLock({ (state: inout LogState) -> Pending? in
            if state.closed { return nil }
            let ids = state.progress.unsynced
            state.progress.unsynced = []
            let dirty = state.progress.directoryDirty
            state.progress.directoryDirty = false
            let head = state.persistableHead
            let needsState = persistState && !state.memory.memoryOnly
                && (state.progress.version != state.progress.persistedVersion || head != state.progress.persistedHead)
            let bytes = needsState ? LogStateFile.encode(head: head, counters: state.counters, shortRegions: state.progress.shortRegions) : nil
            return (ids, dirty, bytes, head, state.progress.version)
        }) else { return }
        var failure: StorageError?
        if force {
            for id in ids.sorted() {
                let segmentPath = path + "/" + StorageLayout.segmentName(id: id)
                do {
                    let fd = try FileIO.open(segmentPath, O_RDONLY)
                    defer { FileIO.closeFile(fd) }
                    try FileIO.sync(fd, path: segmentPath)
                } catch where error.code == ENOENT {
                    continue
                } catch {
                    failure = error
                }
            }
            if directoryDirty {
                do { try FileIO.syncDirectory(path) } catch { failure = error }
            }
        }
        if let stateBytes {
            do {
                try AtomicFile.write(stateBytes, to: statePath, durable: force)
                state.withLock { state in
                    state.progress.persistedHead = head
                    state.progress.persistedVersion = version
                }
            } catch {
                failure = error
            }
        }
        if let failure {
            state.withLock { state in
                state.counters.writeErrors += 1
                if !force || failure.code != 0 { state.progress.unsynced.formUnion(ids) }
                if directoryDirty { state.progress.directoryDirty = true }
            }
            throw failure
        }
    }
}
