public import Foundation

public import SpoorWire

/// A place in the log, for readers that follow it (`spoor events --follow`): everything before it has
/// been read.
public struct LogCursor: Sendable, Hashable, Comparable {
    /// The id of the segment the cursor is in.
    public var segment: UInt64
    /// The byte offset in that segment.
    public var offset: Int

    /// A cursor at `offset` in segment `segment`; the default is the start of the log.
    public init(segment: UInt64 = 0, offset: Int = 0) {
        self.segment = segment
        self.offset = offset
    }

    init(_ position: LogPosition) {
        self.init(segment: position.segment, offset: position.offset)
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.segment, a.offset) < (b.segment, b.offset)
    }
}

/// What a log directory holds right now, read without the log's lock and without changing anything:
/// the sealed batches and the live records, oldest first.
///
/// A live writer may append, seal or recover while this is read; a record cut short by a write in
/// progress ends the scan of its segment (the next read finds it whole), and records a seal moved to the
/// outbox in between are skipped by position, so nothing is read twice by a reader that keeps a cursor.
public struct LogSnapshot: Sendable {
    /// One sealed batch in the outbox.
    public struct Batch: Sendable {
        /// The file name in the outbox.
        public var file: String
        /// Where the records it holds ended in the log.
        public var end: LogCursor
        /// Whether it lies wholly before the reader's cursor: then it is listed (its end tells which records
        /// it took) but not read.
        public var isBeforeCursor: Bool
        /// The decoded frame; `nil` when it cannot be read or was not read.
        public var frame: DecodedFrame?
        /// Why it cannot be read.
        public var problem: String?
    }

    /// One live record.
    public struct Record: Sendable {
        /// Where it starts.
        public var position: LogCursor
        /// Where the next record starts.
        public var end: LogCursor
        /// Its payload: one protobuf `Batch.events` entry.
        public var payload: [UInt8]
        /// The context record in effect for it (a `Batch.contexts` entry), which the event may extend.
        public var context: [UInt8]?

        /// A protobuf `Batch` that decodes as this one event, made whole: the context, then the payload.
        public var batch: [UInt8] { RecordFormat.wholeEvent(payload, context: context) }
    }

    /// Sealed batches waiting in the outbox, in log order.
    public var batches: [Batch]
    /// The batches taken from other processes' logs to upload (`claimed`), by name; not positions of this log.
    public var claimed: [Batch] = []
    /// Where live records start: records before it were sealed, released or dropped.
    public var head: LogCursor
    /// Live records (at or after the head), in log order.
    public var records: [Record]
}

extension EventLog {
    /// Reads and decodes the batch file at `path` into `batch` (its frame, or the problem). False when the file is
    /// gone since the listing (released after its upload, or claimed by another process): nothing to show.
    private static func read(_ path: String, into batch: inout LogSnapshot.Batch) -> Bool {
        do {
            let bytes = try FileIO.readFile(path, limit: FrameLimits().maxFrameBytes)
            batch.frame = try FrameDecoder().decode(bytes)
        } catch let error as StorageError {
            if error.code == ENOENT { return false }
            batch.problem = error.description
        } catch {
            batch.problem = "\(error)"
        }
        return true
    }

    /// Reads the sealed batches and the live records in `directory` without taking the lock.
    ///
    /// - Parameters:
    ///   - directory: the log directory.
    ///   - cursor: skip what lies before this cursor (batches before it are listed but not read,
    ///     segments before it are not read).
    public static func snapshot(directory: URL, after cursor: LogCursor = LogCursor()) throws(StorageError) -> LogSnapshot {
        let path = directory.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StorageError(.directoryUnavailable, path: path, reason: "not a directory")
        }
        var head = LogPosition(segment: 0, offset: 0)
        if let bytes = try? FileIO.readFile(path + "/" + StorageLayout.logStateName, limit: 4096), let state = LogStateFile.decode(bytes) {
            head = state.head
        }
        // The outbox before the segments: a seal in between then shows its records as live ones here,
        // and the reader's cursor skips the batch next time.
        var snapshot = LogSnapshot(batches: [], head: LogCursor(), records: [])
        let outbox = path + "/" + StorageLayout.outboxName
        let batchNames = ((try? FileIO.list(outbox)) ?? []).compactMap { name in StorageLayout.batch(fromName: name).map { (name, $0.end) } }
        for (name, end) in batchNames.sorted(by: { $0.1 < $1.1 }) {
            head = max(head, end)
            var batch = LogSnapshot.Batch(file: name, end: LogCursor(end), isBeforeCursor: LogCursor(end) <= cursor)
            if batch.isBeforeCursor {
                snapshot.batches.append(batch)
                continue
            }
            guard read(outbox + "/" + name, into: &batch) else { continue }
            snapshot.batches.append(batch)
        }

        let claimedFolder = path + "/" + StorageLayout.claimedFolderName
        for name in ((try? FileIO.list(claimedFolder)) ?? []) where StorageLayout.batch(fromName: name) != nil {
            var batch = LogSnapshot.Batch(file: name, end: LogCursor(), isBeforeCursor: false)
            guard read(claimedFolder + "/" + name, into: &batch) else { continue }
            snapshot.claimed.append(batch)
        }

        snapshot.head = LogCursor(head)
        let start = max(LogCursor(head), cursor)
        let ids = try FileIO.list(path).compactMap(StorageLayout.segmentID(fromName:)).sorted()
        for id in ids where id >= start.segment {
            let segmentPath = path + "/" + StorageLayout.segmentName(id: id)
            // A follower polling an idle log: nothing past the cursor, so the segment need not be read.
            if id == start.segment, start.offset > SegmentFormat.headerSize,
               let attributes = try? FileManager.default.attributesOfItem(atPath: segmentPath),
               let size = attributes[.size] as? Int, size <= start.offset {
                continue
            }
            guard let bytes = try? FileIO.readFile(segmentPath, limit: StorageLayout.maxSegmentFileBytes),
                  bytes.withUnsafeBytes({ SegmentFormat.headerProblem($0, id: id) }) == nil
            else { continue }
            let scan = bytes.withUnsafeBytes { SegmentScan($0) }
            var context: [UInt8]?
            for found in scan.records {
                if RecordFormat.isContext(bytes, at: found.offset) {
                    context = found.payload(in: bytes)
                    continue
                }
                guard LogCursor(segment: id, offset: found.offset) >= start else { continue }
                snapshot.records.append(LogSnapshot.Record(
                    position: LogCursor(segment: id, offset: found.offset),
                    end: LogCursor(segment: id, offset: found.offset + found.size),
                    payload: found.payload(in: bytes), context: context))
            }
        }
        return snapshot
    }
}
