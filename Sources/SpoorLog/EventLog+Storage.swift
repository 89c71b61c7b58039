import Foundation
import SpoorSystem

// Internals called with `lock` held, except where they say otherwise.
extension EventLog {
    /// Whether appends should go to disk now; retries a failing disk when its time has come.
    func diskUsable(_ state: inout State, now: Int64) -> Bool {
        if !state.diskFailing { return true }
        if state.memoryOnly || now < state.retryAt { return false }
        // Try again: write what memory holds, in order, to a fresh segment.
        state.diskFailing = false
        state.active = nil
        if state.memoryCount == 0 { return true }
        var bytes: [UInt8] = []
        var sizes: [UInt32] = []
        bytes.reserveCapacity(state.memoryBytes)
        let held = state.memory[state.memoryStart...]
        let leading = held.first!.context
        var context = leading
        for record in held {
            // Where the context changes, its record goes in front, as it went in front when appended.
            if let next = record.context, next != context {
                let framed = RecordFormat.frame(next)
                bytes.append(contentsOf: framed)
                sizes.append(UInt32(framed.count))
            }
            context = record.context
            bytes.append(contentsOf: record.framed)
            sizes.append(UInt32(record.framed.count))
        }
        // These records are already counted; take them out of memory before writing them.
        let saved = (state.memory, state.memoryStart, state.memoryBytes)
        state.memory = []
        state.memoryStart = 0
        state.memoryBytes = 0
        let written = bytes.withUnsafeBytes { writeToDisk(&state, $0, sizes: sizes, leadingContext: leading, now: now, alreadyCounted: true) }
        if !written {
            (state.memory, state.memoryStart, state.memoryBytes) = saved
            return false
        }
        logger.notice("spoor: the disk works again; records held in memory were written", metadata: ["records": "\(held.count)"])
        return true
    }

    /// Writes framed records (events and contexts) to the active segment; on failure leaves the log as it was
    /// and returns false.
    ///
    /// `leadingContext` is the payload of the context in effect before the first record; when the segment
    /// does not end with that context (a new segment, or memory written out after newer ones), its record is
    /// written first, so every event finds the context it extends in its own segment.
    func writeToDisk(_ state: inout State, 
        _ bytes: UnsafeRawBufferPointer, sizes: [UInt32], leadingContext: [UInt8]?, now: Int64, alreadyCounted: Bool = false
    ) -> Bool {
        do throws(StorageError) {
            if let last = state.segments.last, state.active != nil,
               last.end > SegmentFormat.headerSize, last.end + bytes.count > configuration.effectiveSegmentBytes {
                state.active = nil
            }
            if state.active == nil { try startSegment(&state) }
            let file = state.active!
            let index = state.segments.count - 1
            let start = state.segments[index].end
            var lead: [UInt8] = []
            if let leadingContext, !sizes.isEmpty, !RecordFormat.isContext(bytes, at: 0),
               state.segments[index].contexts.last?.payload != leadingContext {
                lead = RecordFormat.frame(leadingContext)
            }
            guard start + lead.count + bytes.count <= Int(UInt32.max) else {
                throw StorageError(.ioFailure, path: file.path, reason: "segment would pass 4 GiB")
            }
            do throws(StorageError) {
                if !lead.isEmpty {
                    // A crash between the two writes leaves a context record that no event extends: harmless.
                    try lead.withBytes { raw throws(StorageError) in try FileIO.writeAll(file.fd, raw, path: file.path) }
                }
                try FileIO.writeAll(file.fd, bytes, path: file.path)
            } catch {
                // Cut off whatever part of the group reached the file, and never write to it again.
                try? FileIO.truncate(file.fd, to: start, path: file.path)
                state.active = nil
                throw error
            }
            var offset = start
            if let leadingContext, !lead.isEmpty {
                state.segments[index].contexts.append(ContextRef(offset: UInt32(offset), payload: leadingContext))
                offset += lead.count
            }
            var at = 0
            var events = 0
            var eventBytes = 0
            for size in sizes {
                if RecordFormat.isContext(bytes, at: at) {
                    let payload = Array(bytes[(at + RecordFormat.headerSize)..<(at + Int(size))])
                    state.segments[index].contexts.append(ContextRef(offset: UInt32(offset), payload: payload))
                } else {
                    state.segments[index].records.append(RecordRef(offset: UInt32(offset), size: size))
                    events += 1
                    eventBytes += Int(size)
                }
                at += Int(size)
                offset += Int(size)
            }
            state.segments[index].end = offset
            state.unsynced.insert(state.segments[index].id)
            if !alreadyCounted {
                state.recordCount += events
                state.liveBytes += eventBytes
            }
            return true
        } catch {
            state.counters.writeErrors += 1
            state.lastError = error
            state.diskFailing = true
            state.retryAt = now + configuration.retryInterval.milliseconds
            logger.error("spoor: cannot write to the event log; keeping records in memory", metadata: [
                "error": "\(error)", "records": "\(sizes.count)", "heldInMemory": "\(state.memoryCount + (alreadyCounted ? sizes.count : 0))",
            ])
            return false
        }
    }

    /// Creates the next segment file and makes it the active one.
    func startSegment(_ state: inout State) throws(StorageError) {
        let id = state.nextSegmentID
        let segmentPath = path + "/" + StorageLayout.segmentName(id: id)
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

    /// Holds the event records of `records` in memory, each with the context in effect for it (`leadingContext`
    /// until the group's own context records change it).
    func keepInMemory(_ state: inout State, _ records: RecordBuffer, leadingContext: [UInt8]?) {
        var offset = 0
        var context = leadingContext
        records.bytes.withUnsafeBytes { raw in
            for size in records.sizes {
                let framed = Array(raw[offset..<offset + Int(size)])
                if RecordFormat.isContext(raw, at: offset) {
                    context = Array(framed[RecordFormat.headerSize...])
                } else {
                    state.memory.append(MemoryRecord(framed: framed, context: context))
                    state.memoryBytes += framed.count
                    state.recordCount += 1
                    state.liveBytes += framed.count
                }
                offset += Int(size)
            }
        }
    }

    /// Drops the oldest records while the log is over a cap.
    func enforceCaps(_ state: inout State, now: Int64) {
        var dropped: UInt64 = 0
        while state.recordCount > configuration.maxRecords || state.liveBytes > configuration.maxBytes {
            dropOldest(&state)
            dropped += 1
        }
        // Memory has its own, smaller bound: the oldest records held there go first.
        while state.memoryBytes > configuration.maxMemoryBytes, state.memoryCount > 0 {
            removeFirstInMemory(&state)
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
        collectGarbage(&state)
    }

    func dropOldest(_ state: inout State) {
        if let index = state.segments.firstIndex(where: { $0.liveCount > 0 }) {
            let ref = state.segments[index].records[state.segments[index].head]
            state.segments[index].head += 1
            state.recordCount -= 1
            state.liveBytes -= Int(ref.size)
        } else {
            removeFirstInMemory(&state)
        }
    }

    func removeFirstInMemory(_ state: inout State) {
        let size = state.memory[state.memoryStart].framed.count
        state.memory[state.memoryStart] = MemoryRecord(framed: [], context: nil)
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
    func headPosition(_ state: inout State) -> LogPosition {
        for segment in state.segments where segment.liveCount > 0 {
            return LogPosition(segment: segment.id, offset: Int(segment.records[segment.head].offset))
        }
        if let last = state.segments.last { return LogPosition(segment: last.id, offset: last.end) }
        return LogPosition(segment: state.nextSegmentID, offset: 0)
    }

    /// Deletes segments whose records are all consumed, unless an unfinished seal still needs them.
    func collectGarbage(_ state: inout State) {
        let limit = state.inflightStart?.segment ?? .max
        while let first = state.segments.first, first.liveCount == 0, first.id < limit,
              !(state.active != nil && state.segments.count == 1) {
            let segmentPath = path + "/" + StorageLayout.segmentName(id: first.id)
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
        state.withLock { state in state.counters.writeErrors += 1 }
        logger.error("spoor: event log \(operation) failed", metadata: ["error": "\(error)"])
    }

    func noteCorrupt(segment: UInt64, offset: Int) {
        state.withLock { state in
            state.counters.corrupt += 1
            state.stateVersion += 1
        }
        logger.error("spoor: a record failed its checksum when read; skipped", metadata: [
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
