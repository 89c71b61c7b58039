public import Foundation

import SpoorWire

/// What a storage directory holds, read without changing anything (for `spoor inspect`).
public struct LogReport: Sendable, Codable, Hashable {
    /// One segment file.
    public struct Segment: Sendable, Codable, Hashable {
        /// The file name.
        public var file: String
        /// The file's size.
        public var bytes: Int
        /// Intact records in the file.
        public var records: Int
        /// Of those, records not yet sealed or dropped (at or after the head).
        public var liveRecords: Int
        /// Intact context records in the file (what its events share, stored once; not counted in ``records``).
        public var contexts: Int = 0
        /// Corrupt regions between intact records that no recovery has seen yet (the next one skips and
        /// counts them).
        public var corruptRegions: Int
        /// Corrupt regions an earlier recovery already skipped and counted in ``LogCounters/corrupt``.
        public var skippedRegions: Int
        /// Bytes after the last intact record (recovery truncates them).
        public var tailBytes: Int
        /// Whether those tail bytes look like a record cut short by a crash (rather than damage).
        public var tailIsTorn: Bool
        /// Why the file is not a usable segment, if it is not.
        public var problem: String?
    }

    /// One sealed batch in the outbox.
    public struct Batch: Sendable, Codable, Hashable {
        /// The file name.
        public var file: String
        /// The batch id (32 hex digits).
        public var id: String?
        /// The codec name.
        public var codec: String?
        /// The number of records.
        public var records: Int?
        /// The frame's size.
        public var bytes: Int
        /// The payload's size before compression.
        public var uncompressedBytes: Int?
        /// When it was sealed, in milliseconds since the epoch.
        public var sealedAt: Int64?
        /// Why the frame is unreadable, if it is.
        public var problem: String?

        /// A batch file not read yet: its header fields are filled in by the caller.
        package init(file: String, bytes: Int) {
            self.file = file
            self.bytes = bytes
        }
    }

    /// The directory inspected.
    public var directory: String
    /// Whether another process has the log open now (its counters may be ahead of the state file).
    public var inUse: Bool
    /// `ok`, `missing` or `damaged`.
    public var stateFile: String
    /// The counters as of the last sync or close (zero if the state file is missing or damaged).
    public var counters: LogCounters
    /// The head: the segment file and offset where live records start.
    public var headSegment: String?
    /// The offset of the head in its segment.
    public var headOffset: Int
    /// Live records in all segments.
    public var liveRecords: Int
    /// Bytes of live records (headers included).
    public var liveBytes: Int
    /// The segment files, oldest first.
    public var segments: [Segment]
    /// The sealed batches waiting for upload, oldest first.
    public var batches: [Batch]
    /// The batches taken from other processes' logs to upload (`claimed`), by name.
    public var claimed: [Batch] = []
    /// Files moved aside as damaged (`*.bad`).
    public var quarantined: [String]
    /// Files that are not Spoor's.
    public var foreign: [String]
}

extension EventLog {
    /// Reads what `directory` holds without changing it: no recovery, no lock taken.
    ///
    /// The figures are what recovery would find now: corrupt regions and torn
    /// tails are reported, not repaired.
    public static func inspect(directory: URL) throws(StorageError) -> LogReport {
        let path = directory.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StorageError(.directoryUnavailable, path: path, reason: "not a directory")
        }
        let names = try FileIO.list(path)
        var report = LogReport(
            directory: path, inUse: false, stateFile: "missing", counters: LogCounters(), headSegment: nil, headOffset: 0,
            liveRecords: 0, liveBytes: 0, segments: [], batches: [], quarantined: [], foreign: []
        )

        if names.contains(StorageLayout.lockName), let fd = try? FileIO.open(path + "/" + StorageLayout.lockName, O_RDONLY) {
            if flock(fd, LOCK_SH | LOCK_NB) != 0 { report.inUse = true }
            FileIO.closeFile(fd)
        }

        var head = LogPosition(segment: 0, offset: 0)
        var countedShortRegions: Set<LogPosition> = []
        if names.contains(StorageLayout.logStateName) {
            if let bytes = try? FileIO.readFile(path + "/" + StorageLayout.logStateName, limit: 4096), let state = LogStateFile.decode(bytes) {
                report.stateFile = "ok"
                report.counters = state.counters
                head = state.head
                countedShortRegions = state.shortRegions
            } else {
                report.stateFile = "damaged"
            }
        }

        for folder in [StorageLayout.outboxName, StorageLayout.claimedFolderName] {
            let folderPath = path + "/" + folder
            for name in (try? FileIO.list(folderPath)) ?? [] {
                if name.hasSuffix(StorageLayout.quarantineSuffix) {
                    report.quarantined.append(folder + "/" + name)
                    continue
                }
                guard let parsed = StorageLayout.batch(fromName: name) else {
                    report.foreign.append(folder + "/" + name)
                    continue
                }
                var batch = LogReport.Batch(file: name, bytes: 0)
                do {
                    let bytes = try FileIO.readFile(folderPath + "/" + name, limit: FrameLimits().maxFrameBytes)
                    batch.bytes = bytes.count
                    let header = try FrameDecoder().decode(bytes).header
                    batch.id = header.batchID.description
                    batch.codec = header.codec.description
                    batch.records = Int(header.recordCount)
                    batch.uncompressedBytes = Int(header.uncompressedLength)
                    batch.sealedAt = header.sealedAt
                } catch let error as StorageError {
                    // Claimed by another process since the listing.
                    if error.code == ENOENT { continue }
                    batch.problem = error.description
                } catch {
                    batch.problem = "\(error)"
                }
                if folder == StorageLayout.outboxName {
                    head = max(head, parsed.end)
                    report.batches.append(batch)
                } else {
                    report.claimed.append(batch)
                }
            }
        }

        for name in names {
            if name.hasSuffix(StorageLayout.quarantineSuffix) {
                report.quarantined.append(name)
            } else if !StorageLayout.isOwnLogEntry(name) {
                report.foreign.append(name)
            }
            guard let id = StorageLayout.segmentID(fromName: name) else { continue }
            var segment = LogReport.Segment(file: name, bytes: 0, records: 0, liveRecords: 0, corruptRegions: 0, skippedRegions: 0, tailBytes: 0, tailIsTorn: false)
            do {
                let bytes = try FileIO.readFile(path + "/" + name, limit: StorageLayout.maxSegmentFileBytes)
                segment.bytes = bytes.count
                if let problem = bytes.withUnsafeBytes({ SegmentFormat.headerProblem($0, id: id) }) {
                    segment.problem = "segment " + problem
                } else {
                    let scan = bytes.withUnsafeBytes { SegmentScan($0) }
                    let events = scan.records.filter { !RecordFormat.isContext(bytes, at: $0.offset) }
                    segment.records = events.count
                    segment.contexts = scan.records.count - events.count
                    // Padding records and short regions the state file lists were counted by a recovery.
                    let counted = scan.corruptRegions.filter { countedShortRegions.contains(LogPosition(segment: id, offset: $0.offset)) }.count
                    segment.corruptRegions = scan.corruptRegions.count - counted
                    segment.skippedRegions = scan.paddingRecords + counted
                    segment.tailBytes = bytes.count - scan.validEnd
                    segment.tailIsTorn = scan.tailIsTorn && segment.tailBytes > 0
                    for found in events where LogPosition(segment: id, offset: found.offset) >= head {
                        segment.liveRecords += 1
                        report.liveBytes += found.size
                        if report.headSegment == nil {
                            report.headSegment = name
                            report.headOffset = found.offset
                        }
                    }
                    report.liveRecords += segment.liveRecords
                }
            } catch {
                segment.problem = error.description
            }
            report.segments.append(segment)
        }
        return report
    }
}
