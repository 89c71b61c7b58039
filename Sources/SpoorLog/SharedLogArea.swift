package import Foundation
package import Logging
import SpoorSystem
import SpoorWire

/// The `logs` folder of a storage directory that several processes share: one log per process, the adoption of
/// the logs of processes that are gone, and the claims of other processes' sealed batches.
///
/// The rules (docs/event-log.md, "Several processes"):
/// - each open makes a log of its own, `logs/<pid>-<nonce>`, which holds no lock while open: no other process
///   touches its segments while its maker runs, so there is nothing to lock against;
/// - a log whose maker is gone (its pid names no process of this pid namespace; in this process, a log no longer
///   open) is adopted by the next open: holding its `lock`, the adopter recovers it with the log's own recovery
///   and seals every record into its outbox with the log's own crash-safe seal, then closes it, which persists its
///   head past every batch;
/// - a sealed batch is claimed by renaming it into the claimer's `claimed` folder (one rename: a kill -9 leaves it
///   on one side or the other, never on both or neither). Only batches whose log has persisted its head past them
///   are claimed, so no recovery of that log ever seals their records again; a running process's batches only once
///   they have waited ``claimAfter`` (it uploads its own);
/// - the lifecycle files a gone process left in its log are turned into events in that log by its adopter, before
///   it seals it (``LifecycleRecovery``).
package struct SharedLogArea: Sendable {
    /// The `logs` folder.
    package let folder: String
    /// The `log` folder of an older Spoor, adopted like the log of a process that is gone.
    package let legacyLog: String
    /// How long a running process's sealed batch waits before another process claims it.
    package let claimAfter: Duration
    /// Turns the lifecycle files of an adopted log into events; without it, a log holding them is sealed but kept,
    /// files and all, for an adopter that has it.
    package let lifecycle: LifecycleRecovery?
    /// How many times the stored data was erased (the user's requests, counted in the tracker's shared state). A
    /// log whose `owner` says it followed fewer is never adopted or claimed from: it is erased (gone) or left to
    /// its process, which erases it at its next call (running).
    package let erasures: @Sendable () -> UInt64

    /// The area of `storageDirectory`.
    package init(
        storageDirectory: URL, claimAfter: Duration = .seconds(30), lifecycle: LifecycleRecovery? = nil,
        erasures: @escaping @Sendable () -> UInt64 = { 0 }
    ) {
        let storage = storageDirectory.standardizedFileURL.path
        folder = storage + "/" + StorageLayout.logsFolderName
        legacyLog = storage + "/" + StorageLayout.logFolderName
        self.claimAfter = claimAfter
        self.lifecycle = lifecycle
        self.erasures = erasures
    }

    // MARK: Who is running

    /// The paths of the shared logs open in this process: a log of this pid is gone only when it is not here.
    private static let openHere = Locked<Set<String>>([])

    static func noteOpen(_ path: String) { _ = openHere.withLock { $0.insert(path) } }
    static func noteClosed(_ path: String) { _ = openHere.withLock { $0.remove(path) } }

    /// This process's pid namespace (Linux: the `/proc/self/ns/pid` link, `pid:[…]`); empty where there is none.
    /// A pid means nothing in another namespace (two containers sharing a volume), so a log made in another one
    /// is never taken for gone.
    package static let pidNamespace: String = {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 128)
        let count = readlink("/proc/self/ns/pid", &buffer, buffer.count - 1)
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        return ""
        #endif
    }()

    /// The `owner` file's content for this process, whose log has followed `erasures` erasures of the stored data.
    static func ownerRecord(erasures: UInt64) -> [UInt8] {
        Array("pid \(getpid())\npidns \(pidNamespace)\nerasures \(erasures)\n".utf8)
    }

    /// How many erasures of the stored data the log in `path` has followed, as its `owner` says (0 when it says
    /// nothing: an older Spoor's, or a log made before any erasure).
    package static func erasuresFollowed(_ path: String) -> UInt64 {
        guard let bytes = try? FileIO.readFile(path + "/" + StorageLayout.ownerName, limit: 4096) else { return 0 }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        return lines.first { $0.hasPrefix("erasures ") }.flatMap { UInt64($0.dropFirst(9)) } ?? 0
    }

    /// Whether the log `member` holds data the user asked to erase: it followed fewer erasures than were made.
    package func missedAnErasure(_ member: Member) -> Bool {
        erasures() > Self.erasuresFollowed(member.path)
    }

    /// One log directory found in the area.
    package struct Member: Sendable, Hashable {
        package var path: String
        /// The pid in its name; nil for the legacy `log` folder.
        package var pid: Int32?

        package init(path: String, pid: Int32?) {
            self.path = path
            self.pid = pid
        }
    }

    /// Every log directory in the area (and the legacy `log` folder when there is one), by name.
    package func members() -> [Member] {
        var found: [Member] = []
        if let names = try? FileIO.list(folder) {
            for name in names {
                // A folder itself, never a symbolic link (an adoption or an erasure would act where it points).
                guard let parsed = StorageLayout.processLog(fromName: name), FileIO.isDirectory(folder + "/" + name)
                else { continue }
                found.append(Member(path: folder + "/" + name, pid: parsed.pid))
            }
        }
        if FileIO.isDirectory(legacyLog) { found.append(Member(path: legacyLog, pid: nil)) }
        return found
    }

    /// Whether the process that made `member` is gone, or done with it: the log was closed, its pid names no
    /// running process of this pid namespace, or (this process's own pid) the log is not open here. The legacy log
    /// counts as gone: its lock, held by an older Spoor while open, decides.
    package func isGone(_ member: Member) -> Bool {
        guard let pid = member.pid else { return true }
        if access(member.path + "/" + StorageLayout.closedMarkerName, F_OK) == 0 { return true }
        // A log gets its name only once its `owner` is written (see `openShared`), so one without it was damaged.
        guard let bytes = try? FileIO.readFile(member.path + "/" + StorageLayout.ownerName, limit: 4096) else { return true }
        return Self.makerIsGone(pid: pid, namespace: Self.namespace(inOwner: bytes), log: member.path)
    }

    /// The pid namespace an `owner` file's content names (empty when it names none).
    private static func namespace(inOwner bytes: [UInt8]) -> String {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        return lines.first { $0.hasPrefix("pidns ") }.map { String($0.dropFirst(6)) } ?? ""
    }

    /// Whether process `pid` of pid namespace `namespace`, which made the log `log` (its own name), is gone: it
    /// names no running process of this namespace, or (this process's own pid) the log is not open or being made
    /// here. `EPERM` (another user's process, or one the sandbox hides) counts as running.
    private static func makerIsGone(pid: Int32, namespace: String, log: String) -> Bool {
        // Made in another pid namespace (another container on a shared volume): its pid means nothing here, even
        // one equal to ours, so it is never taken for gone.
        guard namespace == pidNamespace else { return false }
        if pid == getpid() { return !openHere.withLock { $0.contains(log) } }
        return !(kill(pid, 0) == 0 || FileIO.errno == EPERM)
    }

    /// Removes the log folders left under their temporary name (`<pid>-<nonce>.tmp`) by a process killed before
    /// it renamed one to its own (see `openShared`): no member, never adopted, they would stay for good.
    ///
    /// Only once the maker is gone by the rule of ``isGone(_:)``, its pid namespace read from the `owner` file or
    /// from that file's unfinished write; and only a folder holding nothing but those two. A folder without either
    /// (its maker stopped between making it and writing its owner) tells no namespace: it is removed only while
    /// empty, by one `rmdir`, which fails if its maker (another container's process of the same pid) writes its
    /// owner meanwhile; a maker whose folder went makes another under a new name.
    func removeAbandonedLogs() {
        let owner = StorageLayout.ownerName, unfinishedOwner = StorageLayout.temporaryName(for: StorageLayout.ownerName)
        for name in (try? FileIO.list(folder)) ?? [] {
            guard let parsed = StorageLayout.processLogBeingMade(fromName: name) else { continue }
            let path = folder + "/" + name
            let log = folder + "/" + StorageLayout.processLogName(pid: parsed.pid, nonce: parsed.nonce)
            guard let inside = try? FileIO.list(path), inside.allSatisfy({ $0 == owner || $0 == unfinishedOwner }) else { continue }
            if inside.isEmpty {
                if Self.makerIsGone(pid: parsed.pid, namespace: Self.pidNamespace, log: log) { _ = path.withCString { rmdir($0) } }
                continue
            }
            let written = (try? FileIO.readFile(path + "/" + owner, limit: 4096))
                ?? (try? FileIO.readFile(path + "/" + unfinishedOwner, limit: 4096))
            guard let written, String(decoding: written, as: UTF8.self).contains("\npidns "),
                  Self.makerIsGone(pid: parsed.pid, namespace: Self.namespace(inOwner: written), log: log)
            else { continue }
            for file in inside { try? FileIO.unlink(path + "/" + file) }
            _ = path.withCString { rmdir($0) }
        }
    }

    /// The head the log in `path` has persisted in its `state` file, or nil when it has none.
    static func persistedHead(_ path: String) -> LogPosition? {
        guard let bytes = try? FileIO.readFile(path + "/" + StorageLayout.logStateName, limit: 4096) else { return nil }
        return LogStateFile.decode(bytes)?.head
    }

    // MARK: Adoption

    /// The steps of an adoption, reported (with the adopted log's path) to a test that stops the adopter (a kill -9)
    /// after a chosen one.
    package enum AdoptionStep: Sendable {
        /// The log was recovered, holding its lock.
        case recovered
        /// The position the events made from its lifecycle files will start at was noted.
        case lifecycleNoted
        /// The events made from its lifecycle files were appended and forced to disk (the files not yet removed).
        case lifecycleRecovered
        /// One batch was sealed.
        case sealed
        /// The log was closed, its head persisted past every batch.
        case closed
        /// One file of an emptied log, or one of its lifecycle files once turned into events, was deleted.
        case removed
    }

    /// Adopts every log in the area whose maker is gone, except `own`; calls `record` with each live record
    /// adopted, before it is sealed (the tracker learns the last sequence number used from them).
    /// Returns the damage their recoveries found (corrupt regions, torn tails, files moved aside), for the adopter
    /// to count as its own: it is the process that found it.
    @discardableResult
    package func adoptOrphans(except own: String, configuration: EventLog.Configuration, logger: Logger,
                              record: (([UInt8]) -> Void)? = nil, afterStep: ((AdoptionStep, String) -> Void)? = nil) -> LogCounters {
        removeAbandonedLogs()
        var found = LogCounters()
        for member in members() where member.path != own && isGone(member) {
            guard let damage = adopt(member, configuration: configuration, logger: logger, record: record, afterStep: afterStep)
            else { continue }
            found.corrupt += damage.corrupt
            found.tornTails += damage.tornTails
            found.quarantined += damage.quarantined
        }
        return found
    }

    /// Adopts `member`: holding its lock, recovers it and seals every live record into its outbox (the log's own
    /// seal: a kill -9 at any point leaves what the next adopter finishes, never a second batch id for the same
    /// records), closes it (persisting its head past every batch), and removes it once nothing is left in it.
    /// Returns the damage its recovery found, or nil when another process holds its lock (it is adopting it now).
    @discardableResult
    package func adopt(_ member: Member, configuration: EventLog.Configuration, logger: Logger,
                       record: (([UInt8]) -> Void)? = nil, afterStep: ((AdoptionStep, String) -> Void)? = nil) -> LogCounters? {
        let before = (try? FileIO.readFile(member.path + "/" + StorageLayout.logStateName, limit: 4096))
            .flatMap(LogStateFile.decode)?.counters ?? LogCounters()
        let unbounded = Self.adopting(configuration)
        // One descriptor holds the lock from before the open until the emptied log is removed. Letting it go
        // between the two would let a child process, started by another thread meanwhile, keep it (a child holds a
        // copy of every descriptor until it calls exec): the removal would find it taken.
        guard let lockFD = Self.lock(member.path) else { return nil }
        defer { FileIO.closeFile(lockFD) }
        // Its process was gone before it followed an erasure: what it holds is erased, not sent.
        if missedAnErasure(member) {
            _ = eraseHoldingLock(member, configuration: configuration, logger: logger)
            return LogCounters()
        }
        let log: EventLog
        do {
            log = try EventLog(directory: URL(fileURLWithPath: member.path, isDirectory: true), configuration: unbounded,
                               logger: logger, writeRecords: nil, lock: .none)
        } catch {
            return nil
        }
        if log.isMemoryOnly {
            log.close()
            return LogCounters()
        }
        afterStep?(.recovered, member.path)
        var damage = log.counters
        damage.corrupt -= min(damage.corrupt, before.corrupt)
        damage.tornTails -= min(damage.tornTails, before.tornTails)
        damage.quarantined -= min(damage.quarantined, before.quarantined)
        // The events its lifecycle files stand for join its records before they are sealed (and seen by `record`).
        let lifecycle = recoverLifecycle(of: log, logger: logger, afterStep: afterStep)
        if lifecycle == .unsealable {
            log.close()
            return damage
        }
        if let record { log.forEachRecord(record) }
        var sealed = 0
        do {
            while try log.seal() != nil {
                sealed += 1
                afterStep?(.sealed, member.path)
            }
        } catch {
            logger.error("spoor: cannot seal the records of a process that is gone", metadata: [
                "log": "\(member.path)", "error": "\(error)",
            ])
        }
        let empty = log.recordCount == 0 && log.pendingBatches().isEmpty
        log.close()
        afterStep?(.closed, member.path)
        if sealed > 0 {
            logger.notice("spoor: adopted the log of a process that is gone", metadata: [
                "log": "\(member.path)", "batches": "\(sealed)",
            ])
        }
        if empty, lifecycle == .done { remove(member.path, afterStep: afterStep) }
        return damage
    }

    /// Takes the `lock` of the log in `path` for an adoption: the descriptor holding it, or nil when another
    /// process holds it (it is adopting the log now) or the log was removed meanwhile. Waits a little for a lock
    /// held by a copy of another adopter's descriptor that a starting child process has not yet dropped.
    private static func lock(_ path: String) -> Int32? {
        let lockPath = path + "/" + StorageLayout.lockName
        guard let fd = try? FileIO.open(lockPath, O_RDWR | O_CREAT) else { return nil }
        guard EventLog.lockExclusively(fd, grace: .milliseconds(250)) else {
            FileIO.closeFile(fd)
            return nil
        }
        // The adopter that held it may have removed the log, lock file included: this lock is then on a file no
        // longer there, and the folder must not be made again.
        var held = stat(), named = stat()
        guard fstat(fd, &held) == 0, stat(lockPath, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev
        else {
            FileIO.closeFile(fd)
            return nil
        }
        return fd
    }

    /// `configuration` for opening another process's log: the records were within their maker's caps, so the
    /// adopter drops none of them, and seals them all.
    private static func adopting(_ configuration: EventLog.Configuration) -> EventLog.Configuration {
        var unbounded = configuration
        unbounded.maxRecords = Int(Int32.max)
        unbounded.maxBytes = 1 << 50
        unbounded.segmentBytes = configuration.effectiveSegmentBytes
        unbounded.maxPendingBatches = Int(Int32.max)
        return unbounded
    }

    /// Erases the log of a process that is gone, whole (the user asked for the stored data to be erased): holding
    /// its lock, the log's own erase (its head persisted past everything before any file goes, so a kill -9 midway
    /// brings nothing back), then its removal. Nil when another process holds its lock or it cannot be opened.
    package func erase(_ member: Member, configuration: EventLog.Configuration, logger: Logger) -> ErasedLogContents? {
        guard let lockFD = Self.lock(member.path) else { return nil }
        defer { FileIO.closeFile(lockFD) }
        return eraseHoldingLock(member, configuration: configuration, logger: logger)
    }

    private func eraseHoldingLock(_ member: Member, configuration: EventLog.Configuration, logger: Logger) -> ErasedLogContents? {
        guard let log = try? EventLog(directory: URL(fileURLWithPath: member.path, isDirectory: true),
                                      configuration: Self.adopting(configuration), logger: logger, writeRecords: nil,
                                      lock: .none)
        else { return nil }
        let erased = try? log.eraseAll()
        log.close()
        guard erased != nil else { return nil }
        // Its lifecycle files (the pages it showed, its crash) go too: nothing is to be made of them any more.
        for name in StorageLayout.lifecycleFileNames + [StorageLayout.lifecycleRecoveredName] {
            try? FileIO.unlink(member.path + "/" + name)
        }
        remove(member.path, afterStep: nil)
        return erased
    }

    /// Deletes an adopted log that holds nothing any more; the caller holds its lock. Segments go first and the
    /// `state` file after them, so no record can come back to life. Whatever is not the log's own (damaged files
    /// moved aside, a file not Spoor's, the legacy log's rejected batches) stays: the folder holding it is then
    /// renamed `<name>.bad` in the `logs` folder (``setAsideName(for:)``), which no open takes for a log, so it
    /// is kept for support and never adopted again.
    private func remove(_ path: String, afterStep: ((AdoptionStep, String) -> Void)?) {
        // Lifecycle files not yet turned into events keep the log, owner and all, for an adopter that can.
        if Self.holdsLifecycleFiles(path) { return }
        for folder in [path + "/" + StorageLayout.outboxName, path + "/" + StorageLayout.claimedFolderName] {
            let names = (try? FileIO.list(folder)) ?? []
            if names.contains(where: { StorageLayout.batch(fromName: $0) != nil }) { return }
        }
        let names = (try? FileIO.list(path)) ?? []
        do {
            for name in names where StorageLayout.segmentID(fromName: name) != nil {
                try FileIO.unlink(path + "/" + name)
                afterStep?(.removed, path)
            }
            for folder in [StorageLayout.outboxName, StorageLayout.claimedFolderName] {
                let folderPath = path + "/" + folder
                for name in (try? FileIO.list(folderPath)) ?? [] where StorageLayout.isUnfinishedBatch(name) {
                    try FileIO.unlink(folderPath + "/" + name)
                }
                _ = folderPath.withCString { rmdir($0) }
            }
            for name in [StorageLayout.logStateName, StorageLayout.temporaryName(for: StorageLayout.logStateName),
                         StorageLayout.uploadCountersName, StorageLayout.temporaryName(for: StorageLayout.uploadCountersName),
                         StorageLayout.ownerName, StorageLayout.temporaryName(for: StorageLayout.ownerName),
                         StorageLayout.closedMarkerName, StorageLayout.lockName] {
                try FileIO.unlink(path + "/" + name)
                afterStep?(.removed, path)
            }
        } catch {
            return
        }
        if path.withCString({ rmdir($0) }) != 0, FileIO.errno == ENOTEMPTY || FileIO.errno == EEXIST {
            try? FileIO.rename(path, folder + "/" + Self.setAsideName(for: path))
        }
    }

    /// The name in the `logs` folder of an emptied log set aside for the files it kept: its own name with `.bad`.
    package static func setAsideName(for logPath: String) -> String {
        String(logPath.split(separator: "/").last ?? "") + StorageLayout.quarantineSuffix
    }

    /// The emptied logs set aside in the area for the files they kept (damaged ones, files not Spoor's), by name:
    /// folders only, never a symbolic link (which could point anywhere).
    package func setAside() -> [String] {
        ((try? FileIO.list(folder)) ?? []).filter { name in
            name.hasSuffix(StorageLayout.quarantineSuffix) && FileIO.isDirectory(folder + "/" + name)
        }.sorted()
    }
}

extension EventLog {
    /// Opens a log of this process's own in the `logs` folder of `storageDirectory`, after adopting the logs of
    /// processes that are gone (`adopted` sees each of their live records before it is sealed).
    ///
    /// Never throws for a directory another process uses: every process gets a log of its own. Throws only for an
    /// invalid configuration; a storage directory that cannot be used gives a log that keeps events in memory.
    package static func openShared(
        storageDirectory: URL, configuration: Configuration = .init(), logger: Logger = Logger(label: "spoor.log"),
        claimAfter: Duration = .seconds(30), lifecycle: LifecycleRecovery? = nil,
        erasures: @escaping @Sendable () -> UInt64 = { 0 }, adopted: (([UInt8]) -> Void)? = nil,
        afterAdoptionStep: ((SharedLogArea.AdoptionStep, String) -> Void)? = nil
    ) throws(StorageError) -> EventLog {
        let area = SharedLogArea(storageDirectory: storageDirectory, claimAfter: claimAfter, lifecycle: lifecycle, erasures: erasures)
        try? PrivateDirectory.prepare(URL(fileURLWithPath: area.folder, isDirectory: true), logger: logger)
        // The log is noted as open here, made under a temporary name (which no other process lists as a log), its
        // `owner` written inside, and only then renamed to its own: another process, or another open in this one,
        // never sees it without an owner or not yet open, and so never takes it for gone; nor, while it is being
        // made, for a folder left by a process that was killed then (`removeAbandonedLogs`).
        var generator = SystemRandomNumberGenerator()
        var path = area.folder + "/" + StorageLayout.processLogName(pid: getpid(), nonce: generator.next())
        for _ in 0..<4 {
            let building = StorageLayout.temporaryName(for: path)
            SharedLogArea.noteOpen(path)
            let made = building.withCString { mkdir($0, PrivateDirectory.directoryMode) }
            if made == 0 {
                try? AtomicFile.write(SharedLogArea.ownerRecord(erasures: erasures()), to: building + "/" + StorageLayout.ownerName,
                                      durable: configuration.durability != .none)
                if (try? FileIO.rename(building, path)) != nil { break }
            } else if FileIO.errno != EEXIST {
                SharedLogArea.noteClosed(path)
                break  // the folder cannot be used: the log below keeps events in memory
            }
            SharedLogArea.noteClosed(path)
            path = area.folder + "/" + StorageLayout.processLogName(pid: getpid(), nonce: generator.next())
        }
        let log: EventLog
        do {
            log = try EventLog(directory: URL(fileURLWithPath: path, isDirectory: true), configuration: configuration,
                               logger: logger, writeRecords: nil, lock: .none, shared: area)
        } catch {
            SharedLogArea.noteClosed(path)
            throw error
        }
        log.countAdoptionDamage(area.adoptOrphans(except: path, configuration: configuration, logger: logger, record: adopted,
                                                  afterStep: afterAdoptionStep))
        return log
    }

    /// Adds the damage an adoption's recovery found (corrupt regions, torn tails, files moved aside) to this log's
    /// counters, persisted with its next state: the adopter is the process that found it.
    func countAdoptionDamage(_ damage: LogCounters) {
        guard damage.corrupt + damage.tornTails + damage.quarantined > 0 else { return }
        state.withLock { state in
            state.counters.corrupt += damage.corrupt
            state.counters.tornTails += damage.tornTails
            state.counters.quarantined += damage.quarantined
            state.progress.version += 1
        }
    }

    /// Whether the log keeps its records in memory only (its directory could not be used).
    package var isMemoryOnly: Bool { state.withLock { $0.memory.memoryOnly } }

    /// Claims sealed batches of other processes' logs in the shared area into this log's `claimed` folder, where
    /// they wait for upload like the log's own; at most `limit`, and never past ``Configuration/maxPendingBatches``.
    /// Returns how many were claimed.
    ///
    /// A batch is taken only when its log's `state` file has its head past it (no recovery of that log can seal
    /// its records again), and a running process's only once it waited ``SharedLogArea/claimAfter``; a gone
    /// process's own claims are taken too. A gone process's log that still holds records is adopted first.
    @discardableResult
    package func claimFromOthers(limit: Int) -> Int {
        guard let shared, limit > 0 else { return 0 }
        let room = state.withLock { state in state.closed ? 0 : configuration.maxPendingBatches - state.outbox.count }
        var budget = min(limit, room)
        guard budget > 0 else { return 0 }
        var claimed = 0
        let now = Date().timeIntervalSince1970
        let minimumAge = shared.claimAfter.timeInterval
        for member in shared.members() where member.path != path {
            guard budget > 0 else { break }
            let gone = shared.isGone(member)
            if shared.missedAnErasure(member) {
                // What it holds is the user's to erase, not to send: a gone process's log is erased now (its
                // adoption does that), a running one's by its process at its next call.
                if gone { shared.adopt(member, configuration: configuration, logger: logger) }
                continue
            }
            if gone, ((try? FileIO.list(member.path)) ?? []).contains(where: { StorageLayout.segmentID(fromName: $0) != nil })
                || (shared.lifecycle != nil && SharedLogArea.holdsLifecycleFiles(member.path)) {
                if let damage = shared.adopt(member, configuration: configuration, logger: logger) { countAdoptionDamage(damage) }
            }
            var sources: [(folder: String, ownBatches: Bool)] = [(member.path + "/" + StorageLayout.outboxName, true)]
            if gone { sources.append((member.path + "/" + StorageLayout.claimedFolderName, false)) }
            let head = SharedLogArea.persistedHead(member.path)
            for source in sources {
                for name in (try? FileIO.list(source.folder)) ?? [] {
                    guard budget > 0 else { break }
                    guard let parsed = StorageLayout.batch(fromName: name) else { continue }
                    let filePath = source.folder + "/" + name
                    if source.ownBatches {
                        // Its log must never seal these records again: its persisted head is past them.
                        guard let head, parsed.end <= head else { continue }
                        if !gone {
                            guard let written = Self.modificationTime(filePath), now - written >= minimumAge else { continue }
                        }
                    }
                    if claim(filePath, name: name, id: parsed.id) {
                        claimed += 1
                        budget -= 1
                    }
                }
            }
        }
        if claimed > 0, configuration.durability != .none { try? FileIO.syncDirectory(claimedPath) }
        return claimed
    }

    /// When the file at `path` was last written, in seconds since the epoch.
    private static func modificationTime(_ path: String) -> Double? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return Double(info.st_mtimespec.tv_sec)
        #else
        return Double(info.st_mtim.tv_sec)
        #endif
    }

    /// Renames one batch into `claimed` and adds it to the outbox; false when another process renamed it first.
    private func claim(_ filePath: String, name: String, id: BatchID) -> Bool {
        try? FileIO.makeDirectory(claimedPath)
        let destination = claimedPath + "/" + name
        do {
            try FileIO.rename(filePath, destination)
        } catch {
            return false
        }
        let info: SealedBatch
        do {
            info = try Self.describeBatch(try FileIO.readFile(destination, limit: FrameLimits().maxFrameBytes), id: id)
        } catch {
            logger.error("spoor: a claimed batch is unreadable; moved aside", metadata: ["file": "\(destination)", "error": "\(error)"])
            if (try? FileIO.rename(destination, destination + StorageLayout.quarantineSuffix)) == nil { try? FileIO.unlink(destination) }
            state.withLock { state in state.counters.quarantined += 1 }
            return false
        }
        state.withLock { state in
            state.outbox.add(Outbox.Entry(info: info, path: destination, frame: nil, end: LogPosition(segment: 0, offset: 0)))
            state.counters.claimed += 1
        }
        return true
    }
}
