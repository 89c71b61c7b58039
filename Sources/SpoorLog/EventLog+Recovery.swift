import Foundation
import Logging

import SpoorWire

extension EventLog {
    /// Takes the directory's lock, allowing a short grace period before calling it taken.
    ///
    /// A process that spawns a child (`posix_spawn`, `Process`) lends the child every open file
    /// until the child execs, close-on-exec or not; a `flock` lives as long as any copy, so a log
    /// closed and reopened at that moment finds its own lock briefly held. Real contention (another
    /// open log) lasts; that window ends within milliseconds.
    ///
    /// Why a bounded poll rather than a blocking wait: `flock` has no timeout, and nothing wakes a
    /// thread blocked in `flock(LOCK_EX)` short of the lock coming free (closing the descriptor does
    /// not; a signal would need a handler installed in the host process). A blocking call on a thread
    /// of its own, given up after the grace period, would leave that thread blocked for as long as the
    /// other log stays open (for good, under real contention), one more for every refused open. The
    /// poll costs nothing when the lock is free (the first try takes it), and at most the grace
    /// period, about 125 tries of a non-blocking `flock`, when it is not.
    package static func lockExclusively(_ fd: Int32, grace: Duration = .milliseconds(250)) -> Bool {
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        if grace <= .zero { return false }
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while FileIO.errno == EWOULDBLOCK, clock.now < deadline {
            usleep(2_000)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        }
        return false
    }

    /// Sets up the directory and rebuilds the index from the files. Called once, from `init`.
    /// Returns whether recovery found damage, which the caller persists at once.
    func recover(_ state: inout LogState) throws(StorageError) -> Bool {
        try PrivateDirectory.prepare(URL(fileURLWithPath: path, isDirectory: true), logger: logger)
        let lockFD = try FileIO.open(path + "/" + StorageLayout.lockName, O_RDWR | O_CREAT)
        switch directoryLock {
        case .none:
            // A process's own log (no other process touches its segments while this one runs), or an adopted
            // one (its adopter holds the lock). The file is made anyway: it is what an adopter locks.
            FileIO.closeFile(lockFD)
        case .whileOpen(let grace):
            guard Self.lockExclusively(lockFD, grace: grace) else {
                let code = FileIO.errno
                FileIO.closeFile(lockFD)
                if code == EWOULDBLOCK {
                    throw StorageError(.directoryInUse, path: path, code: code, reason: "another event log has this directory open")
                }
                throw FileIO.error("flock", path, code: code)
            }
            state.lockFile = OpenFile(fd: lockFD, path: path + "/" + StorageLayout.lockName)
        }
        try FileIO.makeDirectory(outboxPath)

        // The head: where live records start. The state file has it, unless a seal finished
        // writing its batch but not the state file; then the outbox knows better.
        var head = LogPosition(segment: 0, offset: 0)
        if let bytes = try? FileIO.readFile(statePath, limit: 4096) {
            if let decoded = LogStateFile.decode(bytes) {
                head = decoded.head
                state.counters = decoded.counters
                state.progress.shortRegions = decoded.shortRegions
            } else {
                state.counters.corrupt += 1
                quarantine(&state, statePath, reason: "the state file is damaged; the log head is rebuilt from the segments")
            }
        }
        let countersBefore = state.counters
        recoverOutbox(&state)
        for entry in state.outbox.entries where entry.end > head {
            head = entry.end
        }

        // New segments must sort after the head even when every segment file is gone,
        // or the next recovery would take their records for consumed ones.
        state.segments.nextID = max(state.segments.nextID, head.segment + 1)

        let names = try FileIO.list(path)
        let foreign = names.filter { !StorageLayout.isOwnLogEntry($0) }
        if !foreign.isEmpty {
            logger.warning("spoor: the storage directory holds files that are not Spoor's; they are left alone", metadata: [
                "directory": "\(path)", "files": "\(foreign.prefix(10).joined(separator: ", "))",
            ])
        }
        let ids = names.compactMap(StorageLayout.segmentID(fromName:)).sorted()
        for (index, id) in ids.enumerated() {
            state.segments.nextID = max(state.segments.nextID, id + 1)
            recoverSegment(&state, id: id, isLast: index == ids.count - 1, head: head)
        }
        // Forget short regions of segments that are gone.
        let present = state.segments.ids
        state.progress.shortRegions = state.progress.shortRegions.filter { present.contains($0.segment) }
        state.progress.persistedHead = head
        let now = configuration.now()
        let (dropped, dropReport) = enforceCaps(&state, now: now)
        let garbage = dropped + collectGarbage(&state)
        // No lock is held here (recovery works on a value of its own), so the messages go out at once.
        var messages = LogMessages()
        reportDrops(dropReport, messages: &messages)
        if !garbage.isEmpty {
            state.counters.writeErrors += UInt64(unlinkSegments(garbage, messages: &messages))
            state.progress.directoryDirty = true
        }
        messages.emit(to: logger)
        state.progress.version += 1
        if state.counters.corrupt > 0 || state.counters.tornTails > 0 {
            logger.info("spoor: event log recovered", metadata: [
                "records": "\(state.recordCount)", "corrupt": "\(state.counters.corrupt)", "tornTails": "\(state.counters.tornTails)",
            ])
        }
        return state.counters != countersBefore
    }

    /// Scans one segment: indexes its live records, truncates a torn tail, pads over corrupt regions.
    private func recoverSegment(_ state: inout LogState, id: UInt64, isLast: Bool, head: LogPosition) {
        let segmentPath = path + "/" + StorageLayout.segmentName(id: id)
        if id < head.segment {
            // Consumed before the last run ended; its deletion did not happen or was not durable.
            try? FileIO.unlink(segmentPath)
            state.progress.directoryDirty = true
            return
        }
        let fd: Int32
        let bytes: [UInt8]
        do {
            fd = try FileIO.open(segmentPath, O_RDWR)
            let size = try FileIO.fileSize(fd, path: segmentPath)
            guard size <= StorageLayout.maxSegmentFileBytes else {
                FileIO.closeFile(fd)
                state.counters.quarantined += 1
                quarantine(&state, segmentPath, reason: "a segment file of \(size) bytes is larger than any Spoor writes")
                return
            }
            bytes = try FileIO.pread(fd, count: size, at: 0, path: segmentPath)
        } catch {
            state.counters.writeErrors += 1
            logger.error("spoor: cannot read a segment; its records are skipped", metadata: ["error": "\(error)"])
            return
        }
        defer { FileIO.closeFile(fd) }

        let headerProblem = bytes.withUnsafeBytes { SegmentFormat.headerProblem($0, id: id) }
        if let headerProblem {
            if bytes.count < SegmentFormat.headerSize && SegmentFormat.header(id: id).starts(with: bytes) {
                // Created but its header never fully reached the disk: a torn creation, nothing lost.
                if bytes.count > 0 { state.counters.tornTails += 1 }
                try? FileIO.unlink(segmentPath)
                state.progress.directoryDirty = true
            } else {
                state.counters.quarantined += 1
                quarantine(&state, segmentPath, reason: "segment \(headerProblem)")
            }
            return
        }

        let scan = bytes.withUnsafeBytes { SegmentScan($0) }
        if scan.validEnd < bytes.count {
            if scan.tailIsTorn {
                state.counters.tornTails += 1
            } else {
                state.counters.corrupt += 1
                logger.error("spoor: corrupt records at the end of a segment were cut off", metadata: [
                    "segment": "\(segmentPath)", "offset": "\(scan.validEnd)", "bytes": "\(bytes.count - scan.validEnd)",
                ])
            }
            do {
                try FileIO.truncate(fd, to: scan.validEnd, path: segmentPath)
                try FileIO.sync(fd, path: segmentPath)
            } catch {
                state.counters.writeErrors += 1
                logger.error("spoor: cannot truncate a damaged segment tail", metadata: ["error": "\(error)"])
            }
        }
        for region in scan.corruptRegions {
            // Regions too short for a padding header stay in the file; the state file remembers them.
            if region.length < RecordFormat.headerSize {
                let position = LogPosition(segment: id, offset: region.offset)
                if state.progress.shortRegions.contains(position) { continue }
                state.progress.shortRegions.insert(position)
            }
            state.counters.corrupt += 1
            logger.error("spoor: skipped a corrupt region in a segment", metadata: [
                "segment": "\(segmentPath)", "offset": "\(region.offset)", "bytes": "\(region.length)",
            ])
            padOver(&state, region, in: bytes, fd: fd, path: segmentPath)
        }

        var segment = Segments.Segment(id: id)
        segment.end = scan.validEnd
        for found in scan.records {
            if RecordFormat.isContext(bytes, at: found.offset) {
                // Kept whatever the head: live records after it may extend a context before it.
                let payload = found.payload(in: bytes)
                segment.contexts.append(Segments.ContextRef(offset: UInt32(found.offset), payload: payload))
            } else if LogPosition(segment: id, offset: found.offset) >= head {
                segment.records.append(Segments.RecordRef(offset: UInt32(found.offset), size: UInt32(found.size)))
            }
        }
        if let last = segment.contexts.last { state.segments.tailContext = last.payload }
        state.segments.adopt(segment)
    }

    /// Turns a corrupt region into a padding record, so later scans pass over it without counting it again.
    private func padOver(_ state: inout LogState, _ region: (offset: Int, length: Int), in bytes: [UInt8], fd: Int32, path segmentPath: String) {
        guard region.length >= RecordFormat.headerSize else { return }
        var header = Array(bytes[region.offset..<region.offset + region.length])
        header.withUnsafeMutableBytes { raw in
            RecordFormat.writeHeader(into: raw, at: 0, payloadLength: region.length - RecordFormat.headerSize, padding: true)
        }
        do {
            try FileIO.pwriteAll(fd, Array(header.prefix(RecordFormat.headerSize)), at: region.offset, path: segmentPath)
            try FileIO.sync(fd, path: segmentPath)
        } catch {
            state.counters.writeErrors += 1
            logger.error("spoor: cannot mark a corrupt region", metadata: ["error": "\(error)"])
        }
    }

    /// Loads the outbox: the batches taken from other processes' logs (`claimed`), then the log's own sealed
    /// batches, in log order.
    private func recoverOutbox(_ state: inout LogState) {
        recoverBatches(&state, folder: claimedPath, claimed: true)
        recoverBatches(&state, folder: outboxPath, claimed: false)
    }

    /// Loads the batches of one folder. A claimed batch is not this log's records, so its end position is the
    /// start of the log: it never moves the head.
    private func recoverBatches(_ state: inout LogState, folder: String, claimed: Bool) {
        guard let names = try? FileIO.list(folder) else { return }
        for name in names {
            let filePath = folder + "/" + name
            if StorageLayout.isUnfinishedBatch(name) {
                // A seal that did not finish: its records are still in the log.
                try? FileIO.unlink(filePath)
                continue
            }
            if name.hasSuffix(StorageLayout.quarantineSuffix) { continue }
            guard let parsed = StorageLayout.batch(fromName: name) else {
                logger.warning("spoor: the outbox holds a file that is not a Spoor batch; left alone", metadata: ["file": "\(filePath)"])
                continue
            }
            // Claimed by another process since the listing (it renamed the file away): its to upload now.
            guard let bytes = Self.readBatchFile(filePath) else { continue }
            do {
                let info = try Self.describeBatch(bytes, id: parsed.id)
                state.outbox.add(Outbox.Entry(info: info, path: filePath, frame: nil, end: claimed ? LogPosition(segment: 0, offset: 0) : parsed.end))
            } catch {
                state.counters.quarantined += 1
                quarantine(&state, filePath, reason: "an outbox batch is unreadable (\(error))")
            }
        }
    }

    /// The bytes of a batch file; nil when it is gone. A file too large or unreadable gives no bytes, which
    /// fail as a frame and so move the file aside.
    static func readBatchFile(_ filePath: String) -> [UInt8]? {
        let result = Result { () throws(StorageError) in try FileIO.readFile(filePath, limit: FrameLimits().maxFrameBytes) }
        switch result {
        case .success(let bytes): return bytes
        case .failure(let error): return error.code == ENOENT ? nil : []
        }
    }

    /// What a batch file holds, from its frame's header; throws when it is not a frame or its id is not `id`
    /// (the one its name gives).
    static func describeBatch(_ bytes: [UInt8], id: BatchID) throws -> SealedBatch {
        let frame = try FrameDecoder(limits: FrameLimits()).decodeHeader(bytes)
        guard frame.batchID == id else {
            throw FrameError(.malformedPayload, field: "batch_id", reason: "file name and frame disagree on the batch id")
        }
        return SealedBatch(id: frame.batchID, recordCount: Int(frame.recordCount), codec: frame.codec,
                           frameBytes: bytes.count, sealedAt: frame.sealedAt, isDurable: true)
    }

    /// Renames a damaged file aside (adding `.bad`), so it is kept for inspection and never read again.
    func quarantine(_ state: inout LogState, _ filePath: String, reason: String) {
        logger.error("spoor: \(reason); moved aside", metadata: ["file": "\(filePath)"])
        do {
            try FileIO.rename(filePath, filePath + StorageLayout.quarantineSuffix)
        } catch {
            try? FileIO.unlink(filePath)
        }
        state.progress.directoryDirty = true
    }
}
