package import Foundation
import CSpoorAtomics
package import SpoorLog
import Logging
package import SpoorModel

/// What survives a restart (docs/events.md, "Identity"): identity, super properties, first-launch and first-day flags,
/// consent, and the first sequence number no process has leased. Kept as one small JSON file, replaced atomically,
/// shared by every process that tracks into the storage directory (``PersistentStateFile``).
package struct PersistedState: Codable, Equatable, Sendable {
    package var version = 1
    package var deviceID: String
    package var anonymousID: String
    package var loginID: String?
    package var superProperties: [String: StoredValue]
    /// The install's first calendar day, `yyyy-MM-dd` in the configured time zone.
    package var firstDay: String
    /// True until the lifecycle code consumes it for `$is_first_time`.
    package var firstLaunchPending: Bool
    /// The first sequence number not yet leased to a process (``SequenceLeases``): every number below it may be in
    /// use, none above it is.
    package var nextSequence: UInt64
    /// The user opted out of tracking (``Tracker/optOut(deleteStoredData:)``). Absent in state files written
    /// before consent existed, which were tracking: read as false.
    package var optedOut: Bool
    /// How many times a process erased the stored data (``Tracker/optOut(deleteStoredData:)``): a process that sees
    /// it grow erases what it holds too. Absent in older files: 0.
    package var deletions: UInt64

    package init(
        deviceID: String, anonymousID: String, loginID: String?, superProperties: [String: StoredValue], firstDay: String,
        firstLaunchPending: Bool, nextSequence: UInt64, optedOut: Bool = false, deletions: UInt64 = 0
    ) {
        self.deviceID = deviceID
        self.anonymousID = anonymousID
        self.loginID = loginID
        self.superProperties = superProperties
        self.firstDay = firstDay
        self.firstLaunchPending = firstLaunchPending
        self.nextSequence = nextSequence
        self.optedOut = optedOut
        self.deletions = deletions
    }

    private enum CodingKeys: String, CodingKey {
        case version, deviceID, anonymousID, loginID, superProperties, firstDay, firstLaunchPending, nextSequence, optedOut,
            deletions
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        deviceID = try c.decode(String.self, forKey: .deviceID)
        anonymousID = try c.decode(String.self, forKey: .anonymousID)
        loginID = try c.decodeIfPresent(String.self, forKey: .loginID)
        superProperties = try c.decode([String: StoredValue].self, forKey: .superProperties)
        firstDay = try c.decode(String.self, forKey: .firstDay)
        firstLaunchPending = try c.decode(Bool.self, forKey: .firstLaunchPending)
        nextSequence = try c.decode(UInt64.self, forKey: .nextSequence)
        optedOut = try c.decodeIfPresent(Bool.self, forKey: .optedOut) ?? false
        deletions = try c.decodeIfPresent(UInt64.self, forKey: .deletions) ?? 0
    }

    static func fresh(day: String, optedOut: Bool = false) -> PersistedState {
        let device = UUID().uuidString
        return PersistedState(
            deviceID: device, anonymousID: UUID().uuidString, loginID: nil, superProperties: [:], firstDay: day,
            firstLaunchPending: true, nextSequence: 1, optedOut: optedOut)
    }
}

/// A ``PropertyValue`` in the state file: `{"int": 3}`, `{"list": ["a"]}`, …
package struct StoredValue: Codable, Equatable, Sendable {
    package var value: PropertyValue

    package init(_ value: PropertyValue) { self.value = value }

    private enum Key: String, CodingKey { case string, int, double, bool, date, list }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "one typed value expected"))
        }
        switch key {
        case .string: value = .string(try container.decode(String.self, forKey: key))
        case .int: value = .int(try container.decode(Int64.self, forKey: key))
        case .double: value = .double(try container.decode(Double.self, forKey: key))
        case .bool: value = .bool(try container.decode(Bool.self, forKey: key))
        case .date: value = .date(try container.decode(Int64.self, forKey: key))
        case .list: value = .list(try container.decode([String].self, forKey: key))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch value {
        case .string(let v): try container.encode(v, forKey: .string)
        case .int(let v): try container.encode(v, forKey: .int)
        case .double(let v): try container.encode(v, forKey: .double)
        case .bool(let v): try container.encode(v, forKey: .bool)
        case .date(let v): try container.encode(v, forKey: .date)
        case .list(let v): try container.encode(v, forKey: .list)
        }
    }
}

/// `state.json` in the storage directory, which every process tracking into the directory shares, and `state.lock`
/// beside it.
///
/// The rules (docs/event-log.md, "Several processes"):
/// - a change is a read-modify-write of that one change, holding `state.lock`'s `flock` only around it: read what
///   the file holds (another process may have changed it), apply the change, write the file (a temporary file,
///   forced, renamed), release. So two processes' changes never undo each other;
/// - the first 8 bytes of `state.lock`, mapped into every process, count the changes (the generation). It is
///   raised after the file is replaced, under the lock; a process compares it with the generation it last read on
///   every event (one atomic load, no system call) and reads the file again when it moved;
/// - reading takes no lock: the file is only ever replaced whole by a rename.
package final class PersistentStateFile: @unchecked Sendable {
    // @unchecked: `lockFD` and `word` are set once; the word is only read and written through atomic operations.
    package enum LoadOutcome: Equatable, Sendable {
        case loaded
        case created
        /// The file was unreadable; it was moved aside to `state.json.corrupt` and a fresh state was made.
        case replacedCorrupt(reason: String)
    }

    package let url: URL
    private let lockPath: String
    /// `state.lock`, open for the life of this value; -1 when it could not be opened (the directory is unusable:
    /// changes are then kept in memory, and the writes that fail are logged).
    private let lockFD: Int32
    /// `state.lock`'s words, mapped shared (the change count first); nil when the mapping failed.
    private let word: UnsafeMutablePointer<UInt64>?
    /// The longest a change waits for another process's change to end.
    static let lockWait: Duration = .seconds(5)

    package init(directory: URL) {
        url = directory.appendingPathComponent(StorageLayout.trackerStateName)
        lockPath = directory.appendingPathComponent(StorageLayout.trackerStateLockName).path
        let fd = (try? FileIO.open(lockPath, O_RDWR | O_CREAT)) ?? -1
        lockFD = fd
        word = fd < 0 ? nil : Self.mapWord(fd)
    }

    deinit {
        if let word { munmap(UnsafeMutableRawPointer(word), Self.words * 8) }
        if lockFD >= 0 { FileIO.closeFile(lockFD) }
    }

    /// The words of `state.lock`: the change count, the sequence frontier, the erasure count.
    static let words = 3

    /// Maps the first ``words`` words of `fd`'s file (growing it first; growing reads as zeros).
    private static func mapWord(_ fd: Int32) -> UnsafeMutablePointer<UInt64>? {
        let length = words * 8
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        if info.st_size < length, ftruncate(fd, off_t(length)) != 0 { return nil }
        guard let raw = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), raw != MAP_FAILED else { return nil }
        return raw.assumingMemoryBound(to: UInt64.self)
    }

    /// The sequence frontier and the erasure count the lock file keeps (0 where a word is missing or out of bounds).
    private var keptCounts: (nextSequence: UInt64, deletions: UInt64) {
        guard let word else { return (0, 0) }
        let next = spoor_atomic_load_u64(word + 1), deletions = spoor_atomic_load_u64(word + 2)
        return (next < Self.maxCount ? next : 0, deletions < Self.maxCount ? deletions : 0)
    }

    /// Leases `count` sequence numbers, the first at least `floor`, and returns the first: the frontier moves past
    /// them in `state.json` and in the lock file, holding the lock. When `state.json` holds nothing readable, only
    /// the lock file's frontier moves (the file is not made from nothing here).
    package func lease(_ count: UInt64, from floor: UInt64) throws(StorageError) -> UInt64 {
        let floor = floor <= Self.maxRecordedSequence ? floor : 0, count = min(count, Self.maxRecordedSequence)
        var first: UInt64 = 0
        let placeholder = PersistedState.fresh(day: "")
        _ = try update(fallback: placeholder, counted: false, writesFallback: false) { state in
            first = max(state.nextSequence, floor)
            state.nextSequence = first + count
        }
        return first
    }

    /// The first sequence number no process leased, as far as the state file and the lock file say without taking
    /// the lock (for numbering on when a lease failed).
    package var leasedFrontier: UInt64 { max(read()?.nextSequence ?? 0, keptCounts.nextSequence) }

    /// How many erasures of the stored data were made (no lock): the lock file's word, one load, which every change
    /// keeps at least as high as the state file's count; the state file's where the word is not mapped.
    package var erasures: UInt64 { word != nil ? keptCounts.deletions : read()?.deletions ?? 0 }

    /// Whether the lock file's words are mapped, so a lease or an erasure is kept there even when `state.json`
    /// cannot be written.
    package var keepsCounts: Bool { word != nil }

    /// Keeps the sequence frontier and the erasure count in the lock file; called holding the lock.
    private func keep(nextSequence: UInt64, deletions: UInt64) {
        guard let word else { return }
        spoor_atomic_store_u64(word + 1, nextSequence)
        spoor_atomic_store_u64(word + 2, deletions)
    }

    /// How many changes every process has made to the file so far (0 where the word could not be mapped).
    @inline(__always)
    package var generation: UInt64 {
        guard let word else { return 0 }
        return spoor_atomic_load_u64(word)
    }

    /// The address of the generation word, for a reader that keeps it beside its own state (nil: never changes).
    package var generationWord: UnsafePointer<UInt64>? { word.map { UnsafePointer($0) } }

    // MARK: Reading

    /// The largest state file read: a few hundred super properties at most make one far smaller.
    static let maxFileBytes = 1 << 20
    /// The largest `nextSequence` and `deletions` taken from a file: far beyond any real count, and far from the
    /// top of `UInt64`, so adding a block or one erasure never overflows.
    package static let maxCount: UInt64 = 1 << 62
    /// The largest sequence number taken from a record as a floor for leases: one past it is damage (a log written
    /// by something else), ignored, so the state file never reaches ``maxCount`` and becomes unreadable.
    package static let maxRecordedSequence: UInt64 = 1 << 61

    /// A recorded sequence number as a floor for the next lease (one past it); 0 when it is past any real count.
    package static func floor(after recorded: UInt64?) -> UInt64 {
        guard let recorded, recorded < maxRecordedSequence else { return 0 }
        return recorded + 1
    }

    /// The file's bytes (at most ``maxFileBytes``), or nil when there is no file. Throws when it cannot be read or
    /// is too large.
    private func bytes() throws -> Data? {
        do {
            return Data(try FileIO.readFile(url.path, limit: Self.maxFileBytes))
        } catch where error.code == ENOENT {
            return nil
        }
    }

    /// Decodes and checks a state file's bytes.
    private static func decode(_ data: Data) throws -> PersistedState {
        let state = try JSONDecoder().decode(PersistedState.self, from: data)
        guard state.version == 1, !state.anonymousID.isEmpty, !state.deviceID.isEmpty,
            state.nextSequence < maxCount, state.deletions < maxCount,
            state.superProperties.allSatisfy({ PropertyValidator.check(key: $0.key, value: $0.value.value, event: "state") == nil })
        else {
            throw CocoaError(.coderInvalidValue)
        }
        return state
    }

    /// What the file holds now, or nil when it holds nothing readable. Takes no lock.
    package func read() -> PersistedState? {
        guard let data = try? bytes() else { return nil }
        return try? Self.decode(data)
    }

    /// The state at a tracker's start: what the file holds, or, when it holds nothing readable, a fresh state
    /// written at once (holding the lock, so two processes starting together on a new directory agree on one
    /// identity). An unreadable file is moved aside to `state.json.corrupt`. `optedOut` is a fresh install's consent
    /// (``Configuration/Tracking/startsOptedOut``). `saved` is false when a fresh state could not be written.
    package func load(today: String, optedOut: Bool = false) -> (state: PersistedState, outcome: LoadOutcome, saved: Bool) {
        if let state = read() { return (state, .loaded, true) }
        let fresh = PersistedState.fresh(day: today, optedOut: optedOut)
        do {
            var outcome = LoadOutcome.created
            let (state, _) = try update(fallback: fresh, found: { outcome = $0 }) { _ in }
            return (state, outcome, true)
        } catch {
            return (fresh, .created, false)
        }
    }

    // MARK: Changing

    /// Makes one change: holding the lock, reads what the file holds (`fallback` when nothing readable: an
    /// unreadable file is moved aside), applies `change`, and writes the result durably when it differs from what was
    /// read (or nothing was readable, unless `writesFallback` is false: then only the lock file's counts move).
    /// With `counted`, the generation is raised around the write. Returns the state as written (or as read, when
    /// nothing changed) and the generation it stands for.
    package func update(
        fallback: PersistedState, counted: Bool = true, writesFallback: Bool = true, waiting: Duration = lockWait,
        found: ((LoadOutcome) -> Void)? = nil, _ change: (inout PersistedState) -> Void
    ) throws(StorageError) -> (state: PersistedState, generation: UInt64) {
        // Without a lock file (something else in its place, or no permission for it) the change is still made,
        // unlocked: what one process needs (its own state across restarts) holds, only changes of two processes at
        // the same instant may then undo one another.
        if lockFD >= 0, !EventLog.lockExclusively(lockFD, grace: waiting) {
            throw StorageError(.directoryInUse, path: lockPath, code: FileIO.errno, reason: "another process held the state lock too long")
        }
        defer { if lockFD >= 0 { flock(lockFD, LOCK_UN) } }
        var state = fallback
        var read = false
        var damage: String?
        do {
            if let data = try bytes() {
                state = try Self.decode(data)
                read = true
            }
        } catch {
            damage = "\(error)"
        }
        if let damage {
            // Moved aside (and counted, by whoever asks) only by a change that writes a whole state in its place.
            if writesFallback {
                let aside = url.deletingLastPathComponent().appendingPathComponent(StorageLayout.corruptTrackerStateName)
                try? FileManager.default.removeItem(at: aside)
                try? FileManager.default.moveItem(at: url, to: aside)
            }
            found?(.replacedCorrupt(reason: damage))
        } else {
            found?(read ? .loaded : .created)
        }
        // What must never go back survives in the lock file too: a lost or replaced state file neither hands out
        // leased sequence numbers again nor forgets an erasure.
        let kept = keptCounts
        state.nextSequence = max(state.nextSequence, kept.nextSequence)
        state.deletions = max(state.deletions, kept.deletions)
        let before = state
        change(&state)
        keep(nextSequence: state.nextSequence, deletions: state.deletions)
        if read, state == before { return (state, generation) }
        if !read, !writesFallback { return (state, generation) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes: Data
        do { bytes = try encoder.encode(state) } catch {
            throw StorageError(.directoryUnavailable, path: url.path, reason: "the state could not be encoded: \(error)")
        }
        guard counted, let word else {
            try AtomicFile.write([UInt8](bytes), to: url, durable: true)
            return (state, generation)
        }
        // Raised before the write and after it, whatever became of it: a process killed between the rename and the
        // second raise (or a write that failed after its rename) still leaves a count the others see moved, and a
        // reader that saw the first raise and read the old file sees the second.
        _ = spoor_atomic_add_u64(word, 1)
        defer { _ = spoor_atomic_add_u64(word, 1) }
        try AtomicFile.write([UInt8](bytes), to: url, durable: true)
        return (state, spoor_atomic_load_u64(word) &+ 1)
    }
}

/// Calendar days in a time zone, for `$is_first_day`.
struct CalendarDay: Sendable {
    let calendar: Calendar

    init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    func name(of time: EpochMilliseconds) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(time) / 1000))
        let y = parts.year ?? 1970, m = parts.month ?? 1, d = parts.day ?? 1
        return "\(y)-\(m < 10 ? "0" : "")\(m)-\(d < 10 ? "0" : "")\(d)"
    }

    /// The day's bounds in epoch milliseconds, `start..<end`.
    func range(of name: String) -> Range<EpochMilliseconds>? {
        let parts = name.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3,
            let start = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
            let end = calendar.date(byAdding: .day, value: 1, to: start)
        else { return nil }
        return EpochMilliseconds(start.timeIntervalSince1970 * 1000)..<EpochMilliseconds(end.timeIntervalSince1970 * 1000)
    }
}
