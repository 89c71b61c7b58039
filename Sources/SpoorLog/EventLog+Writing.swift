import Foundation
import SpoorSystem
import SpoorWire

// Writing segments. Each write is planned under the state lock (which segment, where, with which context record
// in front), done holding only the writer lock, and committed under the state lock; files are deleted and
// messages logged after the state lock is released.
extension EventLog {
    /// What an append does, decided under the state lock.
    private enum AppendRoute {
        /// The log is closed: the records were counted as dropped.
        case closed
        /// The disk is failing: the records are held in memory.
        case memory
        /// The disk failed and its retry time has come: write out what memory holds first.
        case retryDisk
        /// Write the records to a segment.
        case disk(Segments.WritePlan)
    }

    /// What a write did, for the state lock to commit.
    struct WriteOutcome {
        var plan: Segments.WritePlan
        /// The file written, or nil if the write failed.
        var file: OpenFile?
        /// Whether the write created the segment's file.
        var created: Bool
        var error: StorageError?
    }

    /// An append, holding the writer lock. Returns whether the caller syncs now, and the segments emptied by the
    /// caps, for the caller to delete after the writer lock (the files are out of the index already).
    func appendHoldingWriterLock(_ records: RecordBuffer, now: Int64, messages: inout LogMessages) -> (sync: Bool, garbage: [UInt64]) {
        let startsWithContext = records.bytes.withUnsafeBytes { RecordFormat.isContext($0, at: 0) }
        var route = state.withLock { state -> AppendRoute in
            if state.closed {
                state.counters.dropped += UInt64(records.count)
                return .closed
            }
            state.counters.appended += UInt64(records.count)
            return planAppend(&state, byteCount: records.bytes.count, startsWithContext: startsWithContext, now: now, retry: true)
        }
        if case .retryDisk = route {
            _ = diskUsable(now: now, messages: &messages)
            route = state.withLock { state in
                planAppend(&state, byteCount: records.bytes.count, startsWithContext: startsWithContext, now: now, retry: false)
            }
        }
        var outcome: WriteOutcome?
        switch route {
        case .closed: return (false, [])
        case .memory, .retryDisk: break
        case .disk(let plan): outcome = records.bytes.withUnsafeBytes { perform(plan, $0) }
        }

        return state.withLock { state in
            var written = false
            if let outcome {
                written = records.bytes.withUnsafeBytes { commit(&state, outcome, $0, sizes: records.sizes, now: now) }
            }
            if !written { state.memory.keep(records, leadingContext: state.segments.tailContext) }
            if let last = records.lastContext { state.segments.tailContext = last }
            let (garbage, dropReport) = enforceCaps(&state, now: now)
            // Only added here; logged by the caller once every lock is released.
            if let failure = outcome?.error {
                messages.add(.error, "spoor: cannot write to the event log; keeping records in memory", [
                    "error": "\(failure)", "records": "\(records.sizes.count)", "heldInMemory": "\(state.memory.count)",
                ])
            }
            reportDrops(dropReport, messages: &messages)
            let syncNeeded: Bool
            switch configuration.durability {
            case .none:
                syncNeeded = false
            case .always:
                syncNeeded = written
            case .batched(let interval):
                syncNeeded = now - state.progress.lastSync >= interval.milliseconds || now < state.progress.lastSync
                if syncNeeded { state.progress.lastSync = now }
            }
            return (syncNeeded, garbage)
        }
    }

    /// Decides where an append goes; with `retry`, a failing disk whose retry time has come is tried again first.
    private func planAppend(_ state: inout LogState, byteCount: Int, startsWithContext: Bool, now: Int64, retry: Bool) -> AppendRoute {
        if state.memory.diskFailing {
            if !retry || state.memory.memoryOnly || now < state.memory.retryAt { return .memory }
            return .retryDisk
        }
        return .disk(state.segments.planWrite(
            byteCount: byteCount, startsWithContext: startsWithContext, leadingContext: state.segments.tailContext,
            segmentBytes: configuration.effectiveSegmentBytes))
    }

    /// Whether appends go to disk now. When the retry time of a failing disk has come, writes the records held
    /// in memory, in order, to a fresh segment first. Called holding the writer lock: nothing else takes records
    /// out of memory meanwhile (a seal that takes records held in memory holds it too).
    func diskUsable(now: Int64, messages: inout LogMessages) -> Bool {
        enum Step {
            case usable, unusable
            case writeOut(Segments.WritePlan, bytes: [UInt8], sizes: [UInt32], records: Int)
        }
        var retired: OpenFile?
        defer { withExtendedLifetime(retired) {} }  // closed after the state lock is released
        let step = state.withLock { state -> Step in
            if !state.memory.diskFailing { return .usable }
            if state.memory.memoryOnly || now < state.memory.retryAt { return .unusable }
            state.memory.diskFailing = false
            retired = state.segments.retireActive()
            if state.memory.count == 0 { return .usable }
            let held = state.memory.framed()
            let plan = state.segments.planWrite(
                byteCount: held.bytes.count, startsWithContext: false, leadingContext: held.leadingContext,
                segmentBytes: configuration.effectiveSegmentBytes)
            return .writeOut(plan, bytes: held.bytes, sizes: held.sizes, records: state.memory.count)
        }
        switch step {
        case .usable: return true
        case .unusable: return false
        case .writeOut(let plan, let bytes, let sizes, let records):
            let outcome = bytes.withUnsafeBytes { perform(plan, $0) }
            let written = state.withLock { state in
                let written = bytes.withUnsafeBytes { commit(&state, outcome, $0, sizes: sizes, now: now) }
                // Written, they are counted in their segment now, no longer in memory.
                if written { state.memory.removeFirst(records) }
                return written
            }
            if let error = outcome.error {
                messages.add(.error, "spoor: cannot write to the event log; keeping records in memory", [
                    "error": "\(error)", "records": "\(records)", "heldInMemory": "\(records)",
                ])
            } else {
                messages.add(.notice, "spoor: the disk works again; records held in memory were written", ["records": "\(records)"])
            }
            return written
        }
    }

    /// Writes framed records (events and contexts) as planned, the plan's context record first; creates the
    /// segment's file if the plan starts one. Called holding the writer lock, not the state lock. On failure,
    /// whatever part of the group reached the file is cut off.
    func perform(_ plan: Segments.WritePlan, _ bytes: UnsafeRawBufferPointer) -> WriteOutcome {
        var created = false
        do throws(StorageError) {
            let file: OpenFile
            if let existing = plan.file {
                file = existing
            } else {
                file = try createSegment(id: plan.id)
                created = true
            }
            guard plan.start + plan.lead.count + bytes.count <= Int(UInt32.max) else {
                throw StorageError(.ioFailure, path: file.path, reason: "segment would pass 4 GiB")
            }
            do throws(StorageError) {
                if !plan.lead.isEmpty {
                    // A crash between the two writes leaves a context record that no event extends: harmless.
                    try plan.lead.withBytes { raw throws(StorageError) in try write(raw, to: file) }
                }
                try write(bytes, to: file)
            } catch {
                try? FileIO.truncate(file.fd, to: plan.start, path: file.path)
                throw error
            }
            return WriteOutcome(plan: plan, file: file, created: created, error: nil)
        } catch {
            return WriteOutcome(plan: plan, file: nil, created: created, error: error)
        }
    }

    /// Writes `bytes` at the end of `file`: straight to `FileIO`, or through a test's stand-in.
    @inline(__always)
    private func write(_ bytes: UnsafeRawBufferPointer, to file: OpenFile) throws(StorageError) {
        if let writeRecords {
            try writeRecords(file.fd, bytes, file.path)
        } else {
            try FileIO.writeAll(file.fd, bytes, path: file.path)
        }
    }

    /// Creates segment `id`'s file with its header.
    private func createSegment(id: UInt64) throws(StorageError) -> OpenFile {
        let segmentPath = path + "/" + StorageLayout.segmentName(id: id)
        let fd = try FileIO.open(segmentPath, O_WRONLY | O_CREAT | O_EXCL | O_APPEND)
        let file = OpenFile(fd: fd, path: segmentPath)
        do {
            try SegmentFormat.header(id: id).withBytes { raw throws(StorageError) in
                try FileIO.writeAll(fd, raw, path: segmentPath)
            }
        } catch {
            try? FileIO.unlink(segmentPath)
            throw error
        }
        return file
    }

    /// Commits what a write did; returns whether the records reached the file. After a failure the disk counts
    /// as failing until the retry interval has passed, and the file is never written again.
    func commit(_ state: inout LogState, _ outcome: WriteOutcome, _ bytes: UnsafeRawBufferPointer, sizes: [UInt32], now: Int64) -> Bool {
        if outcome.created { state.progress.directoryDirty = true }
        if let file = outcome.file {
            state.segments.commitWrite(outcome.plan, file: file, bytes, sizes: sizes)
            state.progress.unsynced.insert(outcome.plan.id)
            return true
        }
        state.segments.commitFailure(outcome.plan, created: outcome.created)
        state.counters.writeErrors += 1
        state.memory.lastError = outcome.error
        state.memory.diskFailing = true
        state.memory.retryAt = now + configuration.retryInterval.milliseconds
        return false
    }

    /// Drops the oldest records while the log is over a cap. Returns the segments emptied, for the caller to
    /// delete once the state lock is released, and the number of drops to report, if a message is due.
    func enforceCaps(_ state: inout LogState, now: Int64) -> (garbage: [UInt64], report: UInt64?) {
        var dropped: UInt64 = 0
        while state.recordCount > configuration.maxRecords || state.liveBytes > configuration.maxBytes {
            if !state.segments.dropOldest() { state.memory.removeFirst() }
            dropped += 1
        }
        // Memory has its own, smaller bound: the oldest records held there go first.
        while state.memory.bytes > configuration.maxMemoryBytes, state.memory.count > 0 {
            state.memory.removeFirst()
            dropped += 1
        }
        guard dropped > 0 else { return ([], nil) }
        state.counters.dropped += dropped
        state.progress.version += 1
        state.droppedSinceMessage += dropped
        var report: UInt64?
        // One message per ten seconds at most: a full log must not flood the logger.
        if state.lastDropMessage.map({ now < $0 || now - $0 >= 10_000 }) ?? true {
            report = state.droppedSinceMessage
            state.droppedSinceMessage = 0
            state.lastDropMessage = now
        }
        return (collectGarbage(&state), report)
    }

    /// Logs the drops ``enforceCaps(_:now:)`` reported.
    func reportDrops(_ dropped: UInt64?, messages: inout LogMessages) {
        guard let dropped else { return }
        messages.add(.warning, "spoor: event log full; dropped the oldest records", [
            "dropped": "\(dropped)", "maxRecords": "\(configuration.maxRecords)", "maxBytes": "\(configuration.maxBytes)",
        ])
    }

    /// Takes out of the index the segments whose records are all consumed, unless an unfinished seal still
    /// needs them, and returns their ids: the caller deletes them (``deleteSegments(_:)``) after the state lock.
    func collectGarbage(_ state: inout LogState) -> [UInt64] {
        let removed = state.segments.removeConsumed(below: state.inflightStart?.segment ?? .max)
        for id in removed { state.progress.unsynced.remove(id) }
        return removed
    }

    /// Deletes the files of segments taken out of the index. Called without the state lock. A file that cannot
    /// be deleted is counted and logged; its records are consumed, so the next recovery deletes it (its id is
    /// below the persisted head).
    func deleteSegments(_ ids: [UInt64], messages: inout LogMessages) {
        guard !ids.isEmpty else { return }
        let failures = unlinkSegments(ids, messages: &messages)
        state.withLock { state in
            state.counters.writeErrors += UInt64(failures)
            state.progress.directoryDirty = true
        }
    }

    /// Unlinks the segment files `ids`, logging each failure; returns the number of failures.
    func unlinkSegments(_ ids: [UInt64], messages: inout LogMessages) -> Int {
        var failures = 0
        for id in ids {
            do {
                try FileIO.unlink(path + "/" + StorageLayout.segmentName(id: id))
            } catch {
                failures += 1
                messages.add(.error, "spoor: cannot delete a consumed segment", ["error": "\(error)"])
            }
        }
        return failures
    }

    func noteFailure(_ operation: String, _ error: StorageError) {
        state.withLock { state in state.counters.writeErrors += 1 }
        logger.error("spoor: event log \(operation) failed", metadata: ["error": "\(error)"])
    }

    func noteCorrupt(segment: UInt64, offset: Int, messages: inout LogMessages) {
        state.withLock { state in
            state.counters.corrupt += 1
            state.progress.version += 1
        }
        messages.add(.error, "spoor: a record failed its checksum when read; skipped", [
            "segment": "\(StorageLayout.segmentName(id: segment))", "offset": "\(offset)",
        ])
    }

    /// The payload of the record at `offset` in `bytes`, if the record is intact.
    static func payload(_ bytes: [UInt8], at offset: Int) -> [UInt8]? {
        bytes.withUnsafeBytes { raw in
            guard let found = RecordFormat.record(in: raw, at: offset), !found.isPadding else { return nil }
            return Array(raw[(offset + RecordFormat.headerSize)..<(offset + found.size)])
        }
    }
}
