public import Foundation
package import SpoorSystem
public import Logging

/// A durable, bounded log of encoded events, kept in segment files in one directory.
///
/// Records are framed with a length, a CRC-32C and a sync marker, so a torn
/// or corrupt record is skipped and counted at recovery and never takes its
/// neighbours with it. The log holds at most ``Configuration/maxRecords``
/// records and ``Configuration/maxBytes`` bytes; when full, the oldest records
/// are dropped, counted and logged. Memory stays bounded whatever the backlog:
/// records live on disk, and the log keeps only eight bytes of index per record.
///
/// When the disk fails (full, unwritable, removed), the log reports it through
/// its logger and ``counters``, keeps new records in memory (at most
/// ``Configuration/maxMemoryBytes``), retries the disk every
/// ``Configuration/retryInterval``, and writes the records out when it can.
///
/// Sealed batches (see ``seal(maxRecords:maxBytes:codec:)``) are kept in an
/// `outbox` folder until ``release(_:)``. The log is thread-safe; a directory
/// can be open in one log at a time (it holds a `flock` on `DIR/lock`). Several processes share a storage
/// directory through per-process logs that hold no lock while open (docs/event-log.md, "Several processes").
public final class EventLog: @unchecked Sendable {
    /// The storage directory.
    public let directory: URL
    /// The configuration the log was opened with.
    public let configuration: Configuration
    let logger: Logger
    let path: String
    var outboxPath: String { path + "/" + StorageLayout.outboxName }
    var claimedPath: String { path + "/" + StorageLayout.claimedFolderName }
    var statePath: String { path + "/" + StorageLayout.logStateName }

    /// Everything the log knows about its files, records and batches (``LogState``). Held only to read or change
    /// that value: no file is touched, no message logged and no other lock taken while it is held, so readers
    /// (``recordCount``, ``counters``, ``pendingBatches()``) never wait behind the disk.
    package let state: Locked<LogState>
    /// Serialises the writers of segments: appends, writing held records out, erasing, closing, and seals that take
    /// records held in memory. A write is planned under `state`, done holding only this lock, and committed under
    /// `state`, so writes reach the file in the order they are committed.
    let writing = Locked()
    /// Serialises syncs and state-file writes.
    let syncing = Locked()
    /// Serialises seals, releases, splits and erases, so batches leave in log order.
    ///
    /// The order locks are taken in: `sealing`, `writing`, `syncing`, `state`; never the other way.
    let sealing = Locked()
    /// A test's stand-in for the write of a group's bytes to a segment file (a slow disk); nil: `FileIO.writeAll`.
    let writeRecords: RecordWriter?
    /// How the log holds its directory's `lock` file.
    let directoryLock: DirectoryLock
    /// The `logs` folder this process's log lives in, beside the other processes' logs; nil for a bare log.
    package let shared: SharedLogArea?

    /// How a log holds its directory's `lock` file.
    package enum DirectoryLock: Sendable {
        /// Held (`flock`) while the log is open, waiting at most `grace` for it: a bare log.
        case whileOpen(grace: Duration)
        /// Never held by the log: a process's own log in a shared storage directory, which no other process writes
        /// while its maker runs (so a suspended process holds no lock); and an adopted log, whose adopter holds the
        /// lock itself from before the open until the emptied log is removed.
        case none
    }

    /// How a write group's bytes reach a segment file (the descriptor, the bytes, the file's path).
    package typealias RecordWriter = @Sendable (Int32, UnsafeRawBufferPointer, String) throws(StorageError) -> Void

    /// Opens (creating if needed) the log in `directory` and recovers what it holds.
    ///
    /// Recovery scans every segment: torn tails are truncated, corrupt regions
    /// skipped, counted and padded over, foreign files reported and left alone.
    /// If the directory cannot be used at all the log runs in memory and says so
    /// through `logger`; this initialiser throws only for an invalid configuration
    /// (``StorageError/Kind/invalidConfiguration``) or a directory another open
    /// log holds (``StorageError/Kind/directoryInUse``).
    public convenience init(directory: URL, configuration: Configuration = .init(), logger: Logger = Logger(label: "spoor.log")) throws(StorageError) {
        try self.init(directory: directory, configuration: configuration, logger: logger, writeRecords: nil)
    }

    /// Opens the log as ``init(directory:configuration:logger:)`` does, with the write of records to segments
    /// replaced (tests hold a write up to stand for a slow disk).
    package init(
        directory: URL, configuration: Configuration, logger: Logger, writeRecords: RecordWriter?,
        lock: DirectoryLock = .whileOpen(grace: .milliseconds(250)), shared: SharedLogArea? = nil
    ) throws(StorageError) {
        guard configuration.maxRecords >= 1, configuration.maxBytes >= 1024,
              configuration.effectiveSegmentBytes >= 1024, configuration.maxMemoryBytes >= 0,
              configuration.maxPendingBatches >= 1
        else {
            throw StorageError(.invalidConfiguration, reason: "maxRecords must be ≥ 1, maxBytes and segmentBytes ≥ 1024, maxPendingBatches ≥ 1")
        }
        self.directory = directory
        self.configuration = configuration
        self.logger = logger
        self.writeRecords = writeRecords
        self.directoryLock = lock
        self.shared = shared
        self.path = directory.standardizedFileURL.path
        state = Locked(LogState())
        do {
            // Recovery works on a value of its own: nothing else can reach the log yet, and it logs as it goes.
            var recovered = LogState()
            recovered.progress.lastSync = configuration.now()
            let foundDamage = try recover(&recovered)
            state.withLock { $0 = recovered }
            // Persist what recovery found now rather than at the next sync or close (hours away with `.always`
            // durability): the damage is already repaired on disk, so a reader of the state file (`spoor inspect`
            // of a live log) would otherwise see neither the damage nor the count.
            if foundDamage {
                do {
                    try syncFiles(persistState: true, wait: true)
                } catch {
                    logger.error("spoor: cannot persist what recovery found", metadata: ["error": "\(error)"])
                }
            }
        } catch where error.kind == .directoryInUse {
            throw error
        } catch {
            logger.error("spoor: storage directory unusable, keeping events in memory only", metadata: ["error": "\(error)"])
            state.withLock { state in
                state = LogState()
                state.memory.memoryOnly = true
                state.memory.diskFailing = true
                state.counters.writeErrors += 1
            }
        }
    }

    /// A log released without ``close()`` persists its state file and releases the directory, but forces
    /// nothing to disk: a `deinit` must not block. It loses only what the durability setting already allows a
    /// crash of the machine to lose (the appends since the last sync); a crash of the process loses nothing, and
    /// seals, releases and ``sync()`` made their own changes durable when they ran.
    deinit {
        finish(force: false)
    }

    // MARK: - Appending

    /// Appends a write group of records; never throws.
    ///
    /// The records are handed to the operating system in one `write` before
    /// this returns. If that fails, the failure is logged and counted and the
    /// records are kept in memory until the disk works again. If the log is
    /// over a cap afterwards, its oldest records are dropped and counted.
    public func append(_ records: RecordBuffer) {
        if records.rejected > 0 {
            state.withLock { state in state.counters.dropped += UInt64(records.rejected) }
            logger.error("spoor: records larger than 16 MiB or not Batch entries were dropped", metadata: ["records": "\(records.rejected)"])
        }
        guard !records.isEmpty else { return }
        let now = configuration.now()
        var messages = LogMessages()
        let (syncNeeded, garbage) = writing.withLock { appendHoldingWriterLock(records, now: now, messages: &messages) }
        deleteSegments(garbage, messages: &messages)
        messages.emit(to: logger)
        if syncNeeded {
            do {
                try syncFiles(persistState: configuration.durability != .always, wait: configuration.durability == .always)
            } catch {
                logger.error("spoor: sync failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Makes every record appended so far durable: writes out records held in
    /// memory, forces the segments to disk and persists the log's state.
    public func sync() throws(StorageError) {
        let now = configuration.now()
        var messages = LogMessages()
        defer { messages.emit(to: logger) }
        try writing.withLock { () throws(StorageError) in
            let failing = try state.withLock { (state: inout LogState) throws(StorageError) -> Bool in
                if state.closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
                state.progress.lastSync = now
                if state.memory.diskFailing { state.memory.retryAt = .min }
                return state.memory.diskFailing
            }
            guard failing, !diskUsable(now: now, messages: &messages) else { return }
            let (lastError, held) = state.withLock { state in (state.memory.lastError, state.memory.count) }
            var error = lastError ?? StorageError(.directoryUnavailable, path: path, reason: "the storage directory is unusable")
            error.reason += "; \(held) records are held in memory"
            throw error
        }
        try syncFiles(persistState: true, wait: true)
    }

    /// The number of live records: on disk and held in memory, not yet sealed.
    public var recordCount: Int { state.withLock { state in state.recordCount } }

    /// The bytes of live framed records (headers included).
    public var byteCount: Int { state.withLock { state in state.liveBytes } }

    /// What the log has counted.
    public var counters: LogCounters { state.withLock { state in state.counters } }

    /// Calls `body` with every live event record in log order.
    ///
    /// Each record is passed as a protobuf `Batch` that decodes as that one event: its payload (a
    /// `Batch.events` entry: tag `0x0A`, varint length, the `Event` bytes), preceded by the context record in
    /// effect for it (a `Batch.contexts` entry) when there is one, which the event may extend. Records that
    /// fail their checksum when read are skipped and counted as corrupt. The log is not locked while `body` runs.
    public func forEachRecord(_ body: ([UInt8]) throws -> Void) rethrows {
        let (segments, memory) = state.withLock { state in
            (state.segments.list.filter { $0.liveCount > 0 }, Array(state.memory.held))
        }
        for segment in segments {
            let records = segment.records[segment.head...]
            let first = Int(records.first!.offset)
            let last = records.last!
            let segmentPath = path + "/" + StorageLayout.segmentName(id: segment.id)
            let bytes: [UInt8]
            do {
                let fd = try FileIO.open(segmentPath, O_RDONLY)
                defer { FileIO.closeFile(fd) }
                bytes = try FileIO.pread(fd, count: Int(last.offset + last.size) - first, at: first, path: segmentPath)
            } catch {
                // The segment was consumed and deleted since the snapshot.
                if error.code == ENOENT { continue }
                noteFailure("read", error)
                continue
            }
            for ref in records {
                guard let payload = Self.payload(bytes, at: Int(ref.offset) - first) else {
                    var messages = LogMessages()
                    noteCorrupt(segment: segment.id, offset: Int(ref.offset), messages: &messages)
                    messages.emit(to: logger)
                    continue
                }
                try body(RecordFormat.wholeEvent(payload, context: segment.context(before: ref.offset)))
            }
        }
        for record in memory {
            try body(RecordFormat.wholeEvent(Array(record.framed[RecordFormat.headerSize...]), context: record.context))
        }
    }

    /// Closes the log: persists its state, forces records to disk (unless the
    /// durability is ``Durability/none``) and releases the directory. An append
    /// in progress finishes first; later appends are dropped and counted.
    public func close() {
        finish(force: configuration.durability != .none)
    }

    /// Persists the state file (forcing it and the segments to disk with `force`) and releases the directory.
    ///
    /// Takes `sealing` first (the lock order's first lock): a seal, release or split in progress finishes before
    /// the directory is released, and one that comes later finds the log closed. Without it, a release could
    /// unlink a batch and rewrite the state file after another log had opened the directory.
    private func finish(force: Bool) {
        var messages = LogMessages()
        defer { messages.emit(to: logger) }
        let closedHere = sealing.withLock {
            writing.withLock { () -> Bool in
                let alreadyClosed = state.withLock { state in state.closed }
                if alreadyClosed { return false }
                do {
                    try syncFiles(persistState: true, wait: true, force: force)
                } catch {
                    messages.add(.error, "spoor: could not persist the log while closing", ["error": "\(error)"])
                }
                // The files are closed (their last references dropped) after the state lock is released.
                let (lost, files) = state.withLock { state in
                    state.closed = true
                    defer {
                        state.segments.active = nil
                        state.lockFile = nil
                    }
                    return (state.memory.count, [state.segments.active, state.lockFile])
                }
                if lost > 0 {
                    messages.add(.warning, "spoor: closing with records the disk refused; they are lost", ["records": "\(lost)"])
                }
                withExtendedLifetime(files) {}
                return true
            }
        }
        if closedHere, shared != nil {
            // Adoptable now by any process, though this one runs on: nothing writes here any more. The log was
            // marked closed holding `sealing` and `writing`, which every seal, release, split, erase and append
            // checks holding one of them; a sync checks it holding `syncing`, and one that checked just before
            // (an append's or `sync()`'s, which run after `writing` is released) may still be writing the `state`
            // file: taking `syncing` once waits for it. No later write starts, so the marker needs no lock.
            syncing.withLock {}
            try? AtomicFile.write([], to: path + "/" + StorageLayout.closedMarkerName, durable: false)
            SharedLogArea.noteClosed(path)
        }
    }
}
