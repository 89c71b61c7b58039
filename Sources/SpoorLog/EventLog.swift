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
/// can be open in one log at a time (it holds a `flock` on `DIR/lock`).
public final class EventLog: @unchecked Sendable {
    /// The storage directory.
    public let directory: URL
    /// The configuration the log was opened with.
    public let configuration: Configuration
    let logger: Logger
    let path: String
    var outboxPath: String { path + "/" + StorageLayout.outboxName }
    var statePath: String { path + "/" + StorageLayout.logStateName }

    /// Everything the log knows about its files, records and batches.
    package let state: Locked<State>
    /// Serialises syncs and state-file writes; taken before `state`, never while holding it.
    let syncing = Locked()
    /// Serialises seals and releases, so batches leave in log order; taken before `state`, never while holding it.
    let sealing = Locked()

    /// Opens (creating if needed) the log in `directory` and recovers what it holds.
    ///
    /// Recovery scans every segment: torn tails are truncated, corrupt regions
    /// skipped, counted and padded over, foreign files reported and left alone.
    /// If the directory cannot be used at all the log runs in memory and says so
    /// through `logger`; this initialiser throws only for an invalid configuration
    /// (``StorageError/Kind/invalidConfiguration``) or a directory another open
    /// log holds (``StorageError/Kind/directoryInUse``).
    public init(directory: URL, configuration: Configuration = .init(), logger: Logger = Logger(label: "spoor.log")) throws(StorageError) {
        guard configuration.maxRecords >= 1, configuration.maxBytes >= 1024,
              configuration.effectiveSegmentBytes >= 1024, configuration.maxMemoryBytes >= 0,
              configuration.maxPendingBatches >= 1
        else {
            throw StorageError(.invalidConfiguration, reason: "maxRecords must be ≥ 1, maxBytes and segmentBytes ≥ 1024, maxPendingBatches ≥ 1")
        }
        self.directory = directory
        self.configuration = configuration
        self.logger = logger
        self.path = directory.standardizedFileURL.path
        var initial = State()
        initial.lastSync = configuration.now()
        state = Locked(initial)
        do {
            let foundDamage = try state.withLock { (state: inout State) throws(StorageError) in try recover(&state) }
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
                state = State()
                state.memoryOnly = true
                state.diskFailing = true
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
        let syncNeeded: Bool = state.withLock { state in
            if state.closed {
                state.counters.dropped += UInt64(records.count)
                return false
            }
            state.counters.appended += UInt64(records.count)
            var written = false
            let leading = state.tailContext
            if diskUsable(&state, now: now) {
                written = records.bytes.withUnsafeBytes { writeToDisk(&state, $0, sizes: records.sizes, leadingContext: leading, now: now) }
            }
            if !written { keepInMemory(&state, records, leadingContext: leading) }
            if let last = records.lastContext { state.tailContext = last }
            enforceCaps(&state, now: now)
            switch configuration.durability {
            case .none:
                return false
            case .always:
                return written
            case .batched(let interval):
                if now - state.lastSync >= interval.milliseconds || now < state.lastSync {
                    state.lastSync = now
                    return true
                }
                return false
            }
        }
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
        try state.withLock { (state: inout State) throws(StorageError) in
            if state.closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            state.lastSync = now
            if state.diskFailing {
                state.retryAt = .min
                guard diskUsable(&state, now: now) else {
                    var error = state.lastError ?? StorageError(.directoryUnavailable, path: path, reason: "the storage directory is unusable")
                    error.reason += "; \(state.memoryCount) records are held in memory"
                    throw error
                }
            }
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
            (state.segments.filter { $0.liveCount > 0 }, Array(state.memory[state.memoryStart...]))
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
                    noteCorrupt(segment: segment.id, offset: Int(ref.offset))
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
    /// durability is ``Durability/none``) and releases the directory. Later
    /// appends are dropped and counted.
    public func close() {
        finish(force: configuration.durability != .none)
    }

    /// Persists the state file (forcing it and the segments to disk with `force`) and releases the directory.
    private func finish(force: Bool) {
        let alreadyClosed = state.withLock { state in state.closed }
        if alreadyClosed { return }
        do {
            try syncFiles(persistState: true, wait: true, force: force)
        } catch {
            logger.error("spoor: could not persist the log while closing", metadata: ["error": "\(error)"])
        }
        state.withLock { state in
            if state.memoryCount > 0 {
                logger.warning("spoor: closing with records the disk refused; they are lost", metadata: ["records": "\(state.memoryCount)"])
            }
            state.closed = true
            state.active = nil
            state.lockFile = nil
        }
    }
}
