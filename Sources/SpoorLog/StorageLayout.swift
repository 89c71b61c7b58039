import SpoorModel
package import SpoorWire

/// Every name Spoor gives a file or folder it keeps, and the parsers for the names it makes.
///
/// A tracker's storage directory holds what all the processes sharing it share: `state.json` (identity, super
/// properties, consent), `state.lock` (held around each change of it; its words count the changes and keep the
/// sequence frontier and the erasure count), `state.json.corrupt` (an unreadable state file moved aside), and the
/// `logs` folder, which holds one log directory per process that ever opened the storage directory, named
/// `<pid>-<16 hex nonce>` (``processLogName(pid:nonce:)``; with `.tmp` while it is being made, with `.bad` once
/// emptied and set aside for the damaged files it still held), plus `rejected` (batches the collector refused,
/// shared by every process's uploader). A `log` folder is the single log of a Spoor from before
/// several processes could share a directory: the first process that opens the directory adopts it like the log of a
/// process that is gone. A `lifecycle.checkpoint` and a `crash.marker` there were left by a Spoor from before each
/// process kept its own: the next tracker reads them once, as the previous run's (and a tracker over a store that is
/// not a log keeps its own there).
///
/// A log directory (a process's `logs/<pid>-<nonce>`, or any directory an ``EventLog`` is opened on) holds
/// `owner` (the pid and the pid namespace of the process that made it), `closed` (made when its process closed it),
/// `lock` (`flock`ed by whoever adopts the log
/// of a process that is gone; a bare log holds it while open), `state` (the log's head and counters), the segments
/// `seg-<16 hex>.log`, the `outbox` folder of sealed batches `<16 hex segment>-<8 hex offset>-<batch id>.spb`, the
/// `claimed` folder (batches this process took from other processes' logs to upload, under the same names),
/// `upload.json` (the uploader's counters), the process's `lifecycle.checkpoint` and `crash.marker` (what its
/// adopter turns into `$AppEnd` and `AppCrashed`), `lifecycle.recovered` (while an adopter turns them into events:
/// where in the log those events start) and, in a bare log, the `rejected` folder (batches
/// `<16 hex ms>-<batch id>-<3 digit status>.spb` and the `dropped` count). A damaged file is renamed aside with
/// `.bad`; a file being replaced is written as `<name>.tmp` first.
///
/// Parsing is strict: a name is ours only if making it again from what was parsed gives the same name, so a
/// hostile or stray name (`seg-+000000000000001.log`, upper-case hex, a sign, extra dashes) is never taken for
/// one of ours, and two names never parse to the same thing.
package enum StorageLayout {
    // MARK: The storage directory

    /// The tracker's state: identity, super properties, consent, the first-launch flag.
    package static let trackerStateName = "state.json"
    /// Where an unreadable `state.json` is moved aside.
    package static let corruptTrackerStateName = trackerStateName + ".corrupt"
    /// The lock every change of `state.json` holds; its words count the changes and keep the sequence frontier and
    /// the erasure count.
    package static let trackerStateLockName = "state.lock"
    /// The lifecycle checkpoint (two slots written in turn): in a process's log directory, and, left by an older
    /// Spoor, in the storage directory.
    package static let lifecycleCheckpointName = "lifecycle.checkpoint"
    /// The crash marker, opened ahead of time so a crashing process can write it; where the checkpoint is.
    package static let crashMarkerName = "crash.marker"
    /// The files that describe one process's session and crash, in the order its adopter removes them.
    package static let lifecycleFileNames = [crashMarkerName, lifecycleCheckpointName]
    /// Written by the adopter of a log before it appends the events made from the log's lifecycle files: the log
    /// position they start at. Present with those files still there, it tells the next adopter (after a kill)
    /// whether the events were already written: the log then ends past that position.
    package static let lifecycleRecoveredName = "lifecycle.recovered"
    /// The single log folder of a Spoor from before several processes could share a storage directory; adopted
    /// by the first process that opens the directory.
    package static let logFolderName = "log"
    /// The folder of the per-process logs.
    package static let logsFolderName = "logs"

    /// The names a tracker makes in its storage directory (with the `state.json` write that did not reach its
    /// rename). `spoor inspect` also looks for a `rejected` folder here, so that name is not foreign either.
    private static let trackerNames: Set<String> = [
        trackerStateName, corruptTrackerStateName, temporaryName(for: trackerStateName), trackerStateLockName,
        lifecycleCheckpointName,
        crashMarkerName, logFolderName, logsFolderName, rejectedFolderName,
    ]

    /// Whether `name`, found in a storage directory, is one a tracker makes there.
    package static func isTrackerEntry(_ name: String) -> Bool { trackerNames.contains(name) }

    /// Whether a directory holding `names` is a tracker's storage directory rather than a log directory: it holds
    /// `state.json` or a `logs` folder, or, without a log's own `state` or `owner` beside them, an older Spoor's
    /// lifecycle files or `log` folder (a process's log holds lifecycle files of its own).
    package static func isStorageDirectory(holding names: some Collection<String>) -> Bool {
        if names.contains(trackerStateName) || names.contains(logsFolderName) { return true }
        if names.contains(logStateName) || names.contains(ownerName) { return false }
        return names.contains { $0 == lifecycleCheckpointName || $0 == crashMarkerName || $0 == logFolderName }
    }

    // MARK: The per-process logs

    /// A process's log folder in `logs`: its pid in decimal and a random nonce, so two processes (or two opens in
    /// one process) never share a log, and whoever finds it can tell whether its maker is still running.
    package static func processLogName(pid: Int32, nonce: UInt64) -> String {
        String(pid) + "-" + hex(nonce, digits: 16)
    }

    /// The pid and nonce in a name ``processLogName(pid:nonce:)`` made, or nil.
    package static func processLog(fromName name: String) -> (pid: Int32, nonce: UInt64)? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard name.utf8.count <= 28, parts.count == 2, parts[1].utf8.count == 16,
              let pid = Int32(parts[0]), pid > 0, let nonce = UInt64(parts[1], radix: 16),
              processLogName(pid: pid, nonce: nonce) == name
        else { return nil }
        return (pid, nonce)
    }

    /// The pid and nonce of a process's log folder still under its temporary name (``temporaryName(for:)`` of a
    /// ``processLogName(pid:nonce:)``: the folder is made so, its `owner` written, then renamed), or nil.
    package static func processLogBeingMade(fromName name: String) -> (pid: Int32, nonce: UInt64)? {
        guard name.hasSuffix(temporarySuffix) else { return nil }
        return processLog(fromName: String(name.dropLast(temporarySuffix.utf8.count)))
    }

    // MARK: The log directory

    /// The lock file: held (`flock`) by whoever adopts the log of a process that is gone, and by a bare log while
    /// it is open.
    package static let lockName = "lock"
    /// Who made a process's log: `pid N` and `pidns TAG` lines.
    package static let ownerName = "owner"
    /// Made when a process closes its log: the log is anybody's to adopt, though its maker still runs.
    package static let closedMarkerName = "closed"
    /// The folder of batches a process took from other processes' logs to upload.
    package static let claimedFolderName = "claimed"
    /// The log's own state file: its head, counters and short regions.
    package static let logStateName = "state"
    /// The folder of sealed batches waiting for upload.
    package static let outboxName = "outbox"
    /// The uploader's counters, kept beside the log so they survive restarts.
    package static let uploadCountersName = "upload.json"
    /// The folder of batches the collector refused for good.
    package static let rejectedFolderName = "rejected"
    /// The count of batches the rejected folder dropped to stay within its limits.
    package static let rejectedDroppedName = "dropped"
    /// Files moved aside because they are damaged get this suffix.
    package static let quarantineSuffix = ".bad"
    /// A file being replaced whole is written under its name with this suffix, then renamed.
    package static let temporarySuffix = ".tmp"
    /// Segment files larger than this are not ours (ours stay near the segment size).
    package static let maxSegmentFileBytes = 256 << 20

    /// The name a whole-file write uses before its rename.
    package static func temporaryName(for name: String) -> String { name + temporarySuffix }

    /// A segment's file name: `seg-<16 hex>.log`.
    package static func segmentName(id: UInt64) -> String {
        "seg-" + hex(id, digits: 16) + ".log"
    }

    /// The segment id in a name ``segmentName(id:)`` made, or nil.
    package static func segmentID(fromName name: String) -> UInt64? {
        guard name.utf8.count == 24, name.hasPrefix("seg-"), name.hasSuffix(".log"),
              let id = UInt64(name.dropFirst(4).dropLast(4), radix: 16), segmentName(id: id) == name
        else { return nil }
        return id
    }

    /// A sealed batch's name in the outbox: the log position just past its last record, and its id. Recovery
    /// learns from it where the log resumes even when the state file was not updated after the seal, and the
    /// names sort in log order.
    package static func batchName(end: LogPosition, id: BatchID) -> String {
        hex(end.segment, digits: 16) + "-" + hex(UInt64(end.offset), digits: 8) + "-" + id.description + ".spb"
    }

    /// The end position and id in a name ``batchName(end:id:)`` made, or nil.
    package static func batch(fromName name: String) -> (end: LogPosition, id: BatchID)? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard name.utf8.count <= 128, name.hasSuffix(".spb"), parts.count == 3, parts[0].utf8.count == 16,
              parts[1].utf8.count == 8,
              let segment = UInt64(parts[0], radix: 16), let offset = UInt32(parts[1], radix: 16),
              let id = BatchID(hex: String(parts[2].dropLast(4)))
        else { return nil }
        let end = LogPosition(segment: segment, offset: Int(offset))
        guard batchName(end: end, id: id) == name else { return nil }
        return (end, id)
    }

    /// A refused batch's name in the rejected folder: when it was set aside (so the names sort oldest first),
    /// its id, and the HTTP status that refused it (clamped to 0...999).
    package static func rejectedName(setAsideAt time: Int64, id: BatchID, status: Int) -> String {
        let status = min(max(status, 0), 999)
        let digits = String(status)
        return hex(UInt64(bitPattern: time), digits: 16) + "-" + id.description + "-"
            + String(repeating: "0", count: 3 - digits.count) + digits + ".spb"
    }

    /// The time, id and status in a name ``rejectedName(setAsideAt:id:status:)`` made, or nil.
    package static func rejected(fromName name: String) -> (setAsideAt: Int64, id: BatchID, status: Int)? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard name.utf8.count <= 128, name.hasSuffix(".spb"), parts.count == 3, parts[0].utf8.count == 16,
              parts[2].utf8.count == 7,
              let time = UInt64(parts[0], radix: 16), let id = BatchID(hex: String(parts[1])),
              let status = Int(parts[2].dropLast(4))
        else { return nil }
        let setAsideAt = Int64(bitPattern: time)
        guard rejectedName(setAsideAt: setAsideAt, id: id, status: status) == name else { return nil }
        return (setAsideAt, id, status)
    }

    /// What a name in a log directory is.
    package enum LogEntry: Hashable, Sendable {
        case lock
        case owner
        case closedMarker
        case claimedFolder
        case state
        case outbox
        case uploadCounters
        case rejectedFolder
        /// The lifecycle checkpoint, the crash marker, or the note of their recovery.
        case lifecycle
        case segment(id: UInt64)
        /// A damaged file moved aside.
        case quarantined
        /// A whole-file write that did not reach its rename.
        case temporary
    }

    /// What `name`, found in a log directory, is; nil for a name Spoor never makes there.
    package static func logEntry(_ name: String) -> LogEntry? {
        switch name {
        case lockName: return .lock
        case ownerName: return .owner
        case closedMarkerName: return .closedMarker
        case claimedFolderName: return .claimedFolder
        case logStateName: return .state
        case outboxName: return .outbox
        case uploadCountersName: return .uploadCounters
        case rejectedFolderName: return .rejectedFolder
        case lifecycleCheckpointName, crashMarkerName, lifecycleRecoveredName: return .lifecycle
        case temporaryName(for: logStateName), temporaryName(for: uploadCountersName),
             temporaryName(for: lifecycleRecoveredName), temporaryName(for: ownerName): return .temporary
        default:
            if let id = segmentID(fromName: name) { return .segment(id: id) }
            if name.hasSuffix(quarantineSuffix), name.utf8.count > quarantineSuffix.utf8.count { return .quarantined }
            return nil
        }
    }

    /// Whether `name`, found in a log directory, is one Spoor makes there.
    package static func isOwnLogEntry(_ name: String) -> Bool { logEntry(name) != nil }

    /// Whether `name`, found in the outbox, is a batch write that did not reach its rename (safe to delete:
    /// its records are still in the log).
    package static func isUnfinishedBatch(_ name: String) -> Bool {
        name.hasSuffix(temporarySuffix) && batch(fromName: String(name.dropLast(temporarySuffix.utf8.count))) != nil
    }
}
