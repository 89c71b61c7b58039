public import Foundation
public import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// When appended records are forced to stable storage.
///
/// Whatever the setting, an append hands its records to the operating system
/// before it returns, so a crash of the process (`kill -9`) loses nothing; the
/// setting decides what survives a crash of the machine or a power cut.
public enum Durability: Sendable, Hashable {
    /// Only ``EventLog/sync()`` forces records to disk.
    case none
    /// Records are forced to disk by the first append after `interval` has passed since the last sync.
    case batched(interval: Duration)
    /// Every write group is forced to disk (`fdatasync`) before ``EventLog/append(_:)`` returns.
    case always
}

/// A position in the log: a segment and a byte offset in it.
struct LogPosition: Comparable, Hashable, Sendable {
    var segment: UInt64
    var offset: Int

    static func < (a: Self, b: Self) -> Bool {
        (a.segment, a.offset) < (b.segment, b.offset)
    }
}

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
    /// The log's limits and behaviour.
    public struct Configuration: Sendable {
        /// The most bytes of framed records the log holds (default 32 MiB).
        public var maxBytes: Int
        /// The most records the log holds (default 10,000).
        public var maxRecords: Int
        /// When records are forced to disk (default: at most a second after they are appended).
        public var durability: Durability
        /// The size at which a new segment file is started; `nil` picks `maxBytes / 16` within 256 KiB...4 MiB.
        public var segmentBytes: Int?
        /// The most bytes of records kept in memory while the disk is failing (default 4 MiB).
        public var maxMemoryBytes: Int
        /// The most sealed batches waiting in the outbox (default 16).
        public var maxPendingBatches: Int
        /// How long the log waits before trying the disk again after a failure (default 5 s).
        public var retryInterval: Duration
        /// The wall clock, in milliseconds since the epoch; injected by tests.
        public var now: @Sendable () -> Int64

        /// Creates a configuration.
        public init(
            maxBytes: Int = 32 << 20,
            maxRecords: Int = 10_000,
            durability: Durability = .batched(interval: .seconds(1)),
            segmentBytes: Int? = nil,
            maxMemoryBytes: Int = 4 << 20,
            maxPendingBatches: Int = 16,
            retryInterval: Duration = .seconds(5),
            now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
        ) {
            self.maxBytes = maxBytes
            self.maxRecords = maxRecords
            self.durability = durability
            self.segmentBytes = segmentBytes
            self.maxMemoryBytes = maxMemoryBytes
            self.maxPendingBatches = maxPendingBatches
            self.retryInterval = retryInterval
            self.now = now
        }

        var effectiveSegmentBytes: Int {
            segmentBytes ?? min(max(maxBytes / 16, 256 << 10), 4 << 20)
        }
    }

    /// Where one record sits in its segment.
    struct RecordRef {
        var offset: UInt32
        var size: UInt32
    }

    /// One segment file and the index of its records.
    struct Segment {
        let id: UInt64
        var records: ContiguousArray<RecordRef> = []
        /// The index of the first live record.
        var head = 0
        /// The end of the valid bytes in the file.
        var end = SegmentFormat.headerSize

        var liveCount: Int { records.count - head }
    }

    /// An open file descriptor, closed when the last reference goes.
    final class OpenFile: @unchecked Sendable {
        let fd: Int32
        let path: String
        init(fd: Int32, path: String) {
            self.fd = fd
            self.path = path
        }
        deinit { FileIO.closeFile(fd) }
    }

    /// A batch in the outbox.
    struct Pending {
        var info: SealedBatch
        /// The file holding the frame, or nil if it could only be kept in memory.
        var path: String?
        /// The frame, when it is kept in memory only.
        var frame: [UInt8]?
        /// The log position just past its last record.
        var end: LogPosition
    }

    struct State {
        var segments: [Segment] = []
        /// The segment appended to; always the last of `segments`.
        var active: OpenFile?
        var nextSegmentID: UInt64 = 1
        /// Framed records not on disk, oldest first, from `memoryStart`.
        var memory: [[UInt8]] = []
        var memoryStart = 0
        var memoryBytes = 0
        var recordCount = 0
        var liveBytes = 0
        var counters = LogCounters()
        /// Where an unfinished seal started taking records; the persisted head never passes it.
        var inflightStart: LogPosition?
        var persistedHead = LogPosition(segment: 0, offset: 0)
        var stateVersion: UInt64 = 0
        var persistedVersion: UInt64 = 0
        /// The disk failed; retry at `retryAt`.
        var diskFailing = false
        var retryAt: Int64 = 0
        /// The last disk failure, for `sync()` to report.
        var lastError: StorageError?
        /// The directory could not be set up at all: memory only, for good.
        var memoryOnly = false
        /// Segments written since the last sync.
        var unsynced: Set<UInt64> = []
        var directoryDirty = false
        var lastSync: Int64 = 0
        var pending: [Pending] = []
        var closed = false
        var droppedSinceLog: UInt64 = 0
        var lastDropLog: Int64?
        var lockFile: OpenFile?
        /// Corrupt regions too short to pad over, already counted; kept in the state file.
        var shortRegions: Set<LogPosition> = []

        var memoryCount: Int { memory.count - memoryStart }
    }

    /// The storage directory.
    public let directory: URL
    /// The configuration the log was opened with.
    public let configuration: Configuration
    let logger: Logger
    let path: String
    var outboxPath: String { path + "/outbox" }
    var statePath: String { path + "/state" }

    let lock = Lock()
    /// Serialises syncs and state-file writes.
    let syncLock = Lock()
    /// Serialises seals and releases, so batches leave in log order.
    let sealLock = Lock()
    nonisolated(unsafe) var state = State()

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
        state.lastSync = configuration.now()
        do {
            try recover()
        } catch where error.kind == .directoryInUse {
            throw error
        } catch {
            logger.error("spoor: storage directory unusable, keeping events in memory only", metadata: ["error": "\(error)"])
            state = State()
            state.memoryOnly = true
            state.diskFailing = true
            state.counters.writeErrors += 1
        }
    }

    deinit {
        if !state.closed { close() }
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
            lock.withLock { state.counters.dropped += UInt64(records.rejected) }
            logger.error("spoor: records larger than 16 MiB or not Batch entries were dropped", metadata: ["records": "\(records.rejected)"])
        }
        guard !records.isEmpty else { return }
        let now = configuration.now()
        let syncNeeded: Bool = lock.withLock {
            if state.closed {
                state.counters.dropped += UInt64(records.count)
                return false
            }
            state.counters.appended += UInt64(records.count)
            var written = false
            if diskUsable(now: now) {
                written = records.bytes.withUnsafeBytes { writeToDisk($0, sizes: records.sizes, now: now) }
            }
            if !written { keepInMemory(records) }
            enforceCaps(now: now)
            switch configuration.durability {
            case .none:
                return false
            case .always:
                return written
            case .batched(let interval):
                let intervalMs = interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000
                if now - state.lastSync >= intervalMs || now < state.lastSync {
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
        try lock.withLock { () throws(StorageError) in
            if state.closed { throw StorageError(.closed, path: path, reason: "the log is closed") }
            state.lastSync = now
            if state.diskFailing {
                state.retryAt = .min
                guard diskUsable(now: now) else {
                    var error = state.lastError ?? StorageError(.directoryUnavailable, path: path, reason: "the storage directory is unusable")
                    error.reason += "; \(state.memoryCount) records are held in memory"
                    throw error
                }
            }
        }
        try syncFiles(persistState: true, wait: true)
    }

    /// The number of live records: on disk and held in memory, not yet sealed.
    public var recordCount: Int { lock.withLock { state.recordCount } }

    /// The bytes of live framed records (headers included).
    public var byteCount: Int { lock.withLock { state.liveBytes } }

    /// What the log has counted.
    public var counters: LogCounters { lock.withLock { state.counters } }

    /// Calls `body` with every live record in log order.
    ///
    /// Each record is passed as its payload: one protobuf `Batch` entry (tag
    /// `0x0A`, varint length, the `Event` bytes), exactly as it will appear in
    /// a sealed batch. Records that fail their checksum when read are skipped
    /// and counted as corrupt. The log is not locked while `body` runs.
    public func forEachRecord(_ body: ([UInt8]) throws -> Void) rethrows {
        let (segments, memory) = lock.withLock {
            (state.segments.filter { $0.liveCount > 0 }, Array(state.memory[state.memoryStart...]))
        }
        for segment in segments {
            let records = segment.records[segment.head...]
            let first = Int(records.first!.offset)
            let last = records.last!
            let segmentPath = path + "/" + SegmentFormat.fileName(id: segment.id)
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
                try body(payload)
            }
        }
        for framed in memory {
            try body(Array(framed[RecordFormat.headerSize...]))
        }
    }

    /// Closes the log: persists its state, forces records to disk (unless the
    /// durability is ``Durability/none``) and releases the directory. Later
    /// appends are dropped and counted.
    public func close() {
        let alreadyClosed = lock.withLock { state.closed }
        if alreadyClosed { return }
        do {
            try syncFiles(persistState: true, wait: true, force: configuration.durability != .none)
        } catch {
            logger.error("spoor: could not persist the log while closing", metadata: ["error": "\(error)"])
        }
        lock.withLock {
            if state.memoryCount > 0 {
                logger.warning("spoor: closing with records the disk refused; they are lost", metadata: ["records": "\(state.memoryCount)"])
            }
            state.closed = true
            state.active = nil
            state.lockFile = nil
        }
    }

    // MARK: - Internals called with `lock` held

    /// Whether appends should go to disk now; retries a failing disk when its time has come.
    func diskUsable(now: Int64) -> Bool {
        if !state.diskFailing { return true }
        if state.memoryOnly || now < state.retryAt { return false }
        // Try again: write what memory holds, in order, to a fresh segment.
        state.diskFailing = false
        state.active = nil
        if state.memoryCount == 0 { return true }
        var bytes: [UInt8] = []
        var sizes: [UInt32] = []
        bytes.reserveCapacity(state.memoryBytes)
        for framed in state.memory[state.memoryStart...] {
            bytes.append(contentsOf: framed)
            sizes.append(UInt32(framed.count))
        }
        // These records are already counted; take them out of memory before writing them.
        let saved = (state.memory, state.memoryStart, state.memoryBytes)
        state.memory = []
        state.memoryStart = 0
        state.memoryBytes = 0
        let written = bytes.withUnsafeBytes { writeToDisk($0, sizes: sizes, now: now, alreadyCounted: true) }
        if !written {
            (state.memory, state.memoryStart, state.memoryBytes) = saved
            return false
        }
        logger.notice("spoor: the disk works again; records held in memory were written", metadata: ["records": "\(sizes.count)"])
        return true
    }

    /// Writes framed records to the active segment; on failure leaves the log as it was and returns false.
    func writeToDisk(_ bytes: UnsafeRawBufferPointer, sizes: [UInt32], now: Int64, alreadyCounted: Bool = false) -> Bool {
        do throws(StorageError) {
            if let last = state.segments.last, state.active != nil,
               last.end > SegmentFormat.headerSize, last.end + bytes.count > configuration.effectiveSegmentBytes {
                state.active = nil
            }
            if state.active == nil { try startSegment() }
            let file = state.active!
            let index = state.segments.count - 1
            let start = state.segments[index].end
            guard start + bytes.count <= Int(UInt32.max) else {
                throw StorageError(.ioFailure, path: file.path, reason: "segment would pass 4 GiB")
            }
            do {
                try FileIO.writeAll(file.fd, bytes, path: file.path)
            } catch {
                // Cut off whatever part of the group reached the file, and never write to it again.
                try? FileIO.truncate(file.fd, to: start, path: file.path)
                state.active = nil
                throw error
            }
            var offset = start
            for size in sizes {
                state.segments[index].records.append(RecordRef(offset: UInt32(offset), size: size))
                offset += Int(size)
            }
            state.segments[index].end = offset
            state.unsynced.insert(state.segments[index].id)
            if !alreadyCounted {
                state.recordCount += sizes.count
                state.liveBytes += bytes.count
            }
            return true
        } catch {
            state.counters.writeErrors += 1
            state.lastError = error
            state.diskFailing = true
            state.retryAt = now + Self.milliseconds(configuration.retryInterval)
            logger.error("spoor: cannot write to the event log; keeping records in memory", metadata: [
                "error": "\(error)", "records": "\(sizes.count)", "heldInMemory": "\(state.memoryCount + (alreadyCounted ? sizes.count : 0))",
            ])
            return false
        }
    }

    /// Creates the next segment file and makes it the active one.
    func startSegment() throws(StorageError) {
        let id = state.nextSegmentID
        let segmentPath = path + "/" + SegmentFormat.fileName(id: id)
        let fd = try FileIO.open(segmentPath, O_WRONLY | O_CREAT | O_EXCL | O_APPEND)
        let file = OpenFile(fd: fd, path: segmentPath)
        state.nextSegmentID += 1
        do {
            try SegmentFormat.header(id: id).withBytes { raw throws(StorageError) in
                try FileIO.writeAll(fd, raw, path: segmentPath)
            }
        } catch {
            try? FileIO.unlink(segmentPath)
            throw error
        }
        state.segments.append(Segment(id: id))
        state.active = file
        state.directoryDirty = true
    }

    func keepInMemory(_ records: RecordBuffer) {
        var offset = 0
        records.bytes.withUnsafeBytes { raw in
            for size in records.sizes {
                state.memory.append(Array(raw[offset..<offset + Int(size)]))
                offset += Int(size)
            }
        }
        state.memoryBytes += records.bytes.count
        state.recordCount += records.count
        state.liveBytes += records.bytes.count
    }

    /// Drops the oldest records while the log is over a cap.
    func enforceCaps(now: Int64) {
        var dropped: UInt64 = 0
        while state.recordCount > configuration.maxRecords || state.liveBytes > configuration.maxBytes {
            dropOldest()
            dropped += 1
        }
        // Memory has its own, smaller bound: the oldest records held there go first.
        while state.memoryBytes > configuration.maxMemoryBytes, state.memoryCount > 0 {
            removeFirstInMemory()
            dropped += 1
        }
        guard dropped > 0 else { return }
        state.counters.dropped += dropped
        state.stateVersion += 1
        state.droppedSinceLog += dropped
        // One message per ten seconds at most: a full log must not flood the logger.
        if state.lastDropLog.map({ now < $0 || now - $0 >= 10_000 }) ?? true {
            logger.warning("spoor: event log full; dropped the oldest records", metadata: [
                "dropped": "\(state.droppedSinceLog)", "maxRecords": "\(configuration.maxRecords)", "maxBytes": "\(configuration.maxBytes)",
            ])
            state.droppedSinceLog = 0
            state.lastDropLog = now
        }
        collectGarbage()
    }

    func dropOldest() {
        if let index = state.segments.firstIndex(where: { $0.liveCount > 0 }) {
            let ref = state.segments[index].records[state.segments[index].head]
            state.segments[index].head += 1
            state.recordCount -= 1
            state.liveBytes -= Int(ref.size)
        } else {
            removeFirstInMemory()
        }
    }

    func removeFirstInMemory() {
        let size = state.memory[state.memoryStart].count
        state.memory[state.memoryStart] = []
        state.memoryStart += 1
        state.memoryBytes -= size
        state.recordCount -= 1
        state.liveBytes -= size
        if state.memoryStart > 64 && state.memoryStart * 2 > state.memory.count {
            state.memory.removeFirst(state.memoryStart)
            state.memoryStart = 0
        }
    }

    /// The position of the first live record on disk (or the end of the last segment).
    func headPosition() -> LogPosition {
        for segment in state.segments where segment.liveCount > 0 {
            return LogPosition(segment: segment.id, offset: Int(segment.records[segment.head].offset))
        }
        if let last = state.segments.last { return LogPosition(segment: last.id, offset: last.end) }
        return LogPosition(segment: state.nextSegmentID, offset: 0)
    }

    /// Deletes segments whose records are all consumed, unless an unfinished seal still needs them.
    func collectGarbage() {
        let limit = state.inflightStart?.segment ?? .max
        while let first = state.segments.first, first.liveCount == 0, first.id < limit,
              !(state.active != nil && state.segments.count == 1) {
            let segmentPath = path + "/" + SegmentFormat.fileName(id: first.id)
            do {
                try FileIO.unlink(segmentPath)
            } catch {
                state.counters.writeErrors += 1
                logger.error("spoor: cannot delete a consumed segment", metadata: ["error": "\(error)"])
                return
            }
            state.segments.removeFirst()
            state.unsynced.remove(first.id)
            state.directoryDirty = true
        }
    }

    func noteFailure(_ operation: String, _ error: StorageError) {
        lock.withLock { state.counters.writeErrors += 1 }
        logger.error("spoor: event log \(operation) failed", metadata: ["error": "\(error)"])
    }

    func noteCorrupt(segment: UInt64, offset: Int) {
        lock.withLock {
            state.counters.corrupt += 1
            state.stateVersion += 1
        }
        logger.error("spoor: a record failed its checksum when read; skipped", metadata: [
            "segment": "\(SegmentFormat.fileName(id: segment))", "offset": "\(offset)",
        ])
    }

    /// The payload of the record at `offset` in `bytes`, if the record is intact.
    static func payload(_ bytes: [UInt8], at offset: Int) -> [UInt8]? {
        bytes.withUnsafeBytes { raw in
            guard let found = RecordFormat.record(in: raw, at: offset), !found.isPadding else { return nil }
            return Array(raw[(offset + RecordFormat.headerSize)..<(offset + found.size)])
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }

    // MARK: - Syncing and the state file

    /// Forces written segments (and the directory) to disk and, if asked, persists the state file.
    ///
    /// - Parameters:
    ///   - wait: wait for a sync already running; otherwise skip if one is.
    ///   - force: fsync even when durability is `.none` (for `sync()` and state writes).
    func syncFiles(persistState: Bool, wait: Bool, force: Bool = true) throws(StorageError) {
        if wait { syncLock.lock_() } else if !syncLock.tryLock() { return }
        defer { syncLock.unlock() }
        let (ids, directoryDirty, stateBytes, head, version) = lock.withLock {
            let ids = state.unsynced
            state.unsynced = []
            let dirty = state.directoryDirty
            state.directoryDirty = false
            let head = state.inflightStart.map { min($0, headPosition()) } ?? headPosition()
            let needsState = persistState && !state.memoryOnly && (state.stateVersion != state.persistedVersion || head != state.persistedHead)
            return (ids, dirty, needsState ? StateFile.encode(head: head, counters: state.counters, shortRegions: state.shortRegions) : nil, head, state.stateVersion)
        }
        var failure: StorageError?
        if force {
            for id in ids.sorted() {
                let segmentPath = path + "/" + SegmentFormat.fileName(id: id)
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
                try FileIO.writeAtomically(stateBytes, to: statePath, directory: path, durable: force)
                lock.withLock {
                    state.persistedHead = head
                    state.persistedVersion = version
                }
            } catch {
                failure = error
            }
        }
        if let failure {
            lock.withLock {
                state.counters.writeErrors += 1
                if !force || failure.code != 0 { state.unsynced.formUnion(ids) }
                if directoryDirty { state.directoryDirty = true }
            }
            throw failure
        }
    }
}

/// The `state` file: the head of the log, the counters, and the short corrupt regions already
/// counted, written atomically (temporary file and rename).
///
/// ```
/// 0   4   magic "SPST"
/// 4   4   u32 LE version (1)
/// 8   8   u64 LE head segment id
/// 16  8   u64 LE head offset
/// 24  64  8 × u64 LE counters: dropped, corrupt, tornTails, writeErrors, quarantined, sealed, released, rejected
/// 88  4   u32 LE n, the number of short regions (at most 64)
/// 92  12n n × (u64 LE segment id, u32 LE offset): corrupt regions too short to pad over
/// end 4   u32 LE CRC-32C of everything before it
/// ```
enum StateFile {
    static let magic: [UInt8] = Array("SPST".utf8)
    static let maxShortRegions = 64

    struct Contents {
        var head: LogPosition
        var counters: LogCounters
        var shortRegions: Set<LogPosition>
    }

    static func encode(head: LogPosition, counters: LogCounters, shortRegions: Set<LogPosition>) -> [UInt8] {
        var bytes = magic
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        put(UInt32(1))
        put(head.segment)
        put(UInt64(head.offset))
        for value in [counters.dropped, counters.corrupt, counters.tornTails, counters.writeErrors,
                      counters.quarantined, counters.sealed, counters.released, counters.rejected] {
            put(value)
        }
        // The newest regions matter most: older ones sit in segments that go first.
        let kept = shortRegions.sorted().suffix(maxShortRegions)
        put(UInt32(kept.count))
        for region in kept {
            put(region.segment)
            put(UInt32(truncatingIfNeeded: region.offset))
        }
        put(CRC32C.checksum(bytes))
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> Contents? {
        guard bytes.count >= 96, bytes.starts(with: magic) else { return nil }
        return bytes.withUnsafeBytes { raw in
            func get(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            func get32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
            let count = Int(get32(88))
            guard get32(4) == 1, count <= maxShortRegions, bytes.count == 96 + 12 * count,
                  get32(bytes.count - 4) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<(bytes.count - 4)])),
                  get(16) <= UInt64(UInt32.max)
            else { return nil }
            var counters = LogCounters()
            counters.dropped = get(24)
            counters.corrupt = get(32)
            counters.tornTails = get(40)
            counters.writeErrors = get(48)
            counters.quarantined = get(56)
            counters.sealed = get(64)
            counters.released = get(72)
            counters.rejected = get(80)
            var regions: Set<LogPosition> = []
            for index in 0..<count {
                regions.insert(LogPosition(segment: get(92 + 12 * index), offset: Int(get32(100 + 12 * index))))
            }
            return Contents(head: LogPosition(segment: get(8), offset: Int(get(16))), counters: counters, shortRegions: regions)
        }
    }
}
