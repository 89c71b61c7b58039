public import Foundation
public import SpoorModel
public import SpoorLog
import SpoorTracker
public import SpoorUpload
import SpoorWire
public import Logging

/// What a tracker's storage directory (or a bare log directory) holds, read without changing anything
/// and without taking any lock: for `spoor inspect` and `spoor events`, so the tool never parses the
/// tracker's formats itself.
public struct StorageInspection: Sendable {
    /// Which kind of directory was found.
    public enum Layout: String, Sendable {
        /// What `Configuration.storageDirectory` names: `state.json` and `logs/` (an older Spoor's `log/`,
        /// `lifecycle.checkpoint` and `crash.marker`).
        case storageDirectory = "storage directory"
        /// The durable event log's own directory (`log/` inside the storage directory, or an `EventLog`'s).
        case logDirectory = "log directory"
    }

    /// Identity and super properties from `state.json`.
    public struct State: Sendable {
        /// `ok`, `missing` or `damaged`.
        public var status: String
        /// Why the file is damaged.
        public var problem: String?
        public var deviceID: String?
        public var anonymousID: String?
        public var loginID: String?
        /// The login id when logged in, else the anonymous id: what events carry as `distinct_id`.
        public var distinctID: String? { loginID ?? anonymousID }
        /// Sorted by key.
        public var superProperties: [(key: String, value: PropertyValue)] = []
        public var firstDay: String?
        public var firstLaunchPending: Bool?
        public var nextSequence: UInt64?
        /// Whether the user opted out (``Tracker/optOut(deleteStoredData:)``): nothing is recorded, sealed or
        /// uploaded.
        public var optedOut: Bool?
    }

    /// The lifecycle checkpoint: what crash recovery will use if the process dies now. Each process keeps its own in
    /// its log; the one reported is an older Spoor's in the storage directory, else that of the process that wrote
    /// its checkpoint last.
    public struct Checkpoint: Sendable {
        /// `ok`, `missing` or `damaged`.
        public var status: String
        public var problem: String?
        /// The lifecycle state (`initial`, `started`, `startedPassively`, `ended`, `terminated`).
        public var state: String?
        /// Wall time the open session started, epoch milliseconds; `nil` when no session is open.
        public var sessionStart: Int64?
        /// Screen names of the pages being timed.
        public var pages: [String] = []
        /// The last moment the process was known alive, epoch milliseconds.
        public var lastAlive: Int64?
    }

    /// A crash the previous process recorded that the next start has not yet turned into `$AppCrashed`.
    public struct PendingCrash: Sendable {
        /// Epoch milliseconds.
        public var time: Int64
        public var reason: String
    }

    /// One process's log in a storage directory that several processes share (`logs/<pid>-<nonce>`), or the single
    /// `log` folder an older Spoor kept.
    public struct ProcessLog: Sendable {
        /// The log directory.
        public var directory: URL
        /// The pid of the process that made it; nil for an older Spoor's `log` folder.
        public var pid: Int32?
        /// Whether that process is still running (else the next process to open the directory adopts the log).
        public var running: Bool
        /// The uploader's counters as that process last saved them (`upload.json`), if it ever uploaded.
        public var upload: UploadCounters?
    }

    /// The directory as given, standardised.
    public var directory: URL
    public var layout: Layout
    /// `nil` for a log directory.
    public var state: State?
    /// `nil` for a log directory.
    public var checkpoint: Checkpoint?
    public var pendingCrash: PendingCrash?
    /// The log directory: the directory itself for a log directory, the `logs` folder (every process's log) of a
    /// storage directory.
    public var logDirectory: URL
    /// Whether a log exists yet (a tracker creates its log at its first start).
    public var logExists: Bool
    /// Every process's log, by name: for a log directory, the directory itself.
    public var logs: [ProcessLog] = []
    /// Frames the uploader set aside as refused by the collector (`rejected/`), when present.
    public var rejected: [LogReport.Batch]
    /// Where they were found.
    public var rejectedDirectory: URL?
    /// The rejected area's own account: the status that set each batch aside, and how many were dropped.
    public var rejectedSummary: RejectedArea.Summary?
    /// The uploader's counters as it last saved them (`upload.json` in the log directory), if it ever ran.
    public var upload: UploadCounters?
    /// Files in a storage directory that are not the tracker's.
    public var foreign: [String]
    /// Emptied logs of processes that are gone, set aside in the `logs` folder as `<name>.bad` for the files they
    /// still held (damaged files moved aside, files not Spoor's): kept for support, never adopted again.
    public var setAside: [URL] = []

    /// Reads `directory`: a tracker's storage directory when it holds the tracker's files, a log directory
    /// otherwise.
    public static func inspect(_ directory: URL) throws(StorageError) -> StorageInspection {
        let directory = directory.standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StorageError(.directoryUnavailable, path: directory.path, reason: "not a directory")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        } catch {
            throw StorageError(.directoryUnavailable, path: directory.path, reason: "cannot list: \(error.localizedDescription)")
        }
        let isStorage = StorageLayout.isStorageDirectory(holding: names)
        guard isStorage else {
            let rejected = directory.appendingPathComponent(RejectedArea.folderName, isDirectory: true)
            let upload = Uploader.savedCounters(logDirectory: directory)
            return StorageInspection(
                directory: directory, layout: .logDirectory, logDirectory: directory, logExists: true,
                logs: [ProcessLog(directory: directory, pid: nil, running: false, upload: upload)],
                rejected: Self.frames(in: rejected), rejectedDirectory: Self.exists(rejected) ? rejected : nil,
                rejectedSummary: Self.exists(rejected) ? RejectedArea.summary(logDirectory: directory) : nil,
                upload: upload, foreign: [])
        }
        let log = Tracker.logDirectory(in: directory)
        let area = SharedLogArea(storageDirectory: directory)
        let logs = area.members().map { member in
            let url = URL(fileURLWithPath: member.path, isDirectory: true)
            return ProcessLog(directory: url, pid: member.pid, running: !area.isGone(member),
                              upload: Uploader.savedCounters(logDirectory: url))
        }
        var rejectedDirectory: URL?
        // The shared area in `logs`; an older Spoor's in its `log` folder, or beside it.
        for candidate in [log.appendingPathComponent(RejectedArea.folderName, isDirectory: true),
                          directory.appendingPathComponent(StorageLayout.logFolderName + "/" + RejectedArea.folderName, isDirectory: true),
                          directory.appendingPathComponent(RejectedArea.folderName, isDirectory: true)]
        where Self.exists(candidate) {
            rejectedDirectory = candidate
            break
        }
        // An older Spoor's files in the storage directory (the next tracker reads them), else the newest process's.
        var lifecycle = directory
        let legacy = StorageLayout.lifecycleFileNames.contains { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }
        if !legacy, let newest = logs.max(by: { Self.checkpointTime(in: $0.directory) < Self.checkpointTime(in: $1.directory) }) {
            lifecycle = newest.directory
        }
        var crash: PendingCrash?
        if let record = CrashMarker.readPrevious(in: lifecycle) { crash = PendingCrash(time: record.time, reason: record.reason) }
        return StorageInspection(
            directory: directory, layout: .storageDirectory, state: Self.readState(in: directory),
            checkpoint: Self.readCheckpoint(in: lifecycle), pendingCrash: crash, logDirectory: log, logExists: !logs.isEmpty,
            logs: logs, rejected: rejectedDirectory.map(Self.frames(in:)) ?? [], rejectedDirectory: rejectedDirectory,
            rejectedSummary: rejectedDirectory.map { RejectedArea.summary(logDirectory: $0.deletingLastPathComponent()) },
            upload: nil,
            foreign: names.filter { !StorageLayout.isTrackerEntry($0) },
            setAside: area.setAside().map { log.appendingPathComponent($0, isDirectory: true) })
    }

    /// Opens the log to send what the directory holds (`spoor upload`): a log directory itself, holding its lock; in
    /// a storage directory, a log of this process's own that adopts the logs of processes that are gone (turning their
    /// lifecycle files into events, as a tracker does) and claims every sealed batch of the others, running ones
    /// included (the collector stores a batch id once).
    public func openLogForUpload(logger: Logger) throws(StorageError) -> EventLog {
        guard layout == .storageDirectory else { return try EventLog(directory: logDirectory, logger: logger) }
        // Gone processes' sessions and crashes are recovered as a tracker would, and go out with their logs.
        let lifecycle = AdoptedLifecycle.recovery(
            storageDirectory: directory, enabled: Set(AutoTrackEventKind.allCases), logger: logger)
        // A log that missed an erasure of the stored data is erased, not sent, as a tracker's adoption does.
        let storage = directory
        return try EventLog.openShared(
            storageDirectory: directory, logger: logger, claimAfter: .zero, lifecycle: lifecycle,
            erasures: { PersistentStateFile(directory: storage).erasures })
    }

    /// Reads `state.json` as the tracker would, but never moves a damaged file aside.
    static func readState(in directory: URL) -> State {
        let url = directory.appendingPathComponent(StorageLayout.trackerStateName)
        guard let data = FileManager.default.contents(atPath: url.path) else { return State(status: "missing") }
        let persisted: PersistedState
        do {
            persisted = try JSONDecoder().decode(PersistedState.self, from: data)
        } catch {
            return State(status: "damaged", problem: "\(error)")
        }
        return State(
            status: persisted.version == 1 ? "ok" : "damaged",
            problem: persisted.version == 1 ? nil : "unsupported version \(persisted.version)",
            deviceID: persisted.deviceID, anonymousID: persisted.anonymousID, loginID: persisted.loginID,
            superProperties: persisted.superProperties.map { ($0.key, $0.value.value) }.sorted { $0.key < $1.key },
            firstDay: persisted.firstDay, firstLaunchPending: persisted.firstLaunchPending, nextSequence: persisted.nextSequence,
            optedOut: persisted.optedOut)
    }

    static func readCheckpoint(in directory: URL) -> Checkpoint {
        switch LifecycleCheckpointStore(directory: directory).load() {
        case .success(nil):
            return Checkpoint(status: "missing")
        case .success(let checkpoint?):
            return Checkpoint(
                status: "ok", state: checkpoint.state.rawValue, sessionStart: checkpoint.sessionStart?.wall,
                pages: checkpoint.pages.map(\.page.screenName), lastAlive: checkpoint.lastAlive.wall)
        case .failure(let error):
            return Checkpoint(status: "damaged", problem: error.reason)
        }
    }

    /// When the checkpoint in `directory` was last written, in seconds since the epoch; 0 when there is none.
    static func checkpointTime(in directory: URL) -> Double {
        let path = directory.appendingPathComponent(StorageLayout.lifecycleCheckpointName).path
        let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        return date?.timeIntervalSince1970 ?? 0
    }

    static func exists(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The frames in a directory, by name, each with its header or why it cannot be read.
    static func frames(in directory: URL) -> [LogReport.Batch] {
        // Frames only: the area's `dropped` count and unfinished `.tmp` writes are not batches.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".spb") }.sorted()
        return names.map { name in
            var batch = LogReport.Batch(file: name, bytes: 0)
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                batch.problem = "unreadable"
                return batch
            }
            batch.bytes = data.count
            do {
                let header = try FrameDecoder().decode([UInt8](data)).header
                batch.id = header.batchID.description
                batch.codec = header.codec.description
                batch.records = Int(header.recordCount)
                batch.uncompressedBytes = Int(header.uncompressedLength)
                batch.sealedAt = header.sealedAt
            } catch {
                batch.problem = "\(error)"
            }
            return batch
        }
    }
}
