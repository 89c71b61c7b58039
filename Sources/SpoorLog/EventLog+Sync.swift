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
        let (ids, directoryDirty, stateBytes, head, version) = state.withLock { state in
            let ids = state.unsynced
            state.unsynced = []
            let dirty = state.directoryDirty
            state.directoryDirty = false
            let head = state.inflightStart.map { min($0, headPosition(&state)) } ?? headPosition(&state)
            let needsState = persistState && !state.memoryOnly && (state.stateVersion != state.persistedVersion || head != state.persistedHead)
            return (ids, dirty, needsState ? LogStateFile.encode(head: head, counters: state.counters, shortRegions: state.shortRegions) : nil, head, state.stateVersion)
        }
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
                    state.persistedHead = head
                    state.persistedVersion = version
                }
            } catch {
                failure = error
            }
        }
        if let failure {
            state.withLock { state in
                state.counters.writeErrors += 1
                if !force || failure.code != 0 { state.unsynced.formUnion(ids) }
                if directoryDirty { state.directoryDirty = true }
            }
            throw failure
        }
    }
}
