public import Foundation
public import Logging

import SpoorModel
public import SpoorWire
import SpoorSystem

/// How much a log directory's `rejected` folder keeps (``RejectedArea``): a new batch past either bound drops the
/// oldest.
public struct RejectedAreaLimits: Sendable, Hashable {
    /// The most batches kept (default 64).
    public var maxBatches: Int
    /// The most bytes of frames kept (default 8 MiB).
    public var maxBytes: Int

    /// Creates limits.
    public init(maxBatches: Int = 64, maxBytes: Int = 8 << 20) {
        self.maxBatches = maxBatches
        self.maxBytes = maxBytes
    }
}

/// The `rejected` folder of a log directory: batches the collector refused for good (a 4xx other than 401, 403,
/// 408, 413 and 429, or a single event still too large), kept for support instead of being retried forever or
/// deleted.
///
/// Bounded by a count and a byte total: a new batch past either drops the oldest, which is counted (in the
/// folder's `dropped` file, so the count survives restarts) and logged. Nothing is removed silently. File names
/// are `<set-aside time, 16 hex ms>-<batch id>-<status>.spb`, so they sort oldest first and `spoor inspect`
/// can list them without reading them.
public final class RejectedArea: Sendable {
    /// How much the folder keeps (``RejectedAreaLimits``).
    public typealias Limits = RejectedAreaLimits

    /// One batch set aside.
    public struct Entry: Sendable, Hashable, Codable {
        /// The file name inside the folder.
        public var file: String
        /// The batch id.
        public var id: String
        /// The HTTP status that set it aside.
        public var status: Int
        /// When it was set aside, milliseconds since the epoch.
        public var setAsideAt: Int64
        /// The frame's size.
        public var bytes: Int
    }

    /// What the folder holds, for `spoor inspect`.
    public struct Summary: Sendable, Hashable, Codable {
        /// The batches kept, oldest first.
        public var entries: [Entry]
        /// Batches dropped to stay within the limits, ever.
        public var dropped: Int
        /// The bytes of the batches kept.
        public var bytes: Int { entries.reduce(0) { $0 + $1.bytes } }
    }

    /// The folder's name inside a log directory.
    public static let folderName = StorageLayout.rejectedFolderName
    static let droppedFileName = StorageLayout.rejectedDroppedName

    /// The folder.
    public let directory: URL
    /// The limits it keeps.
    public let limits: Limits
    private let logger: Logger
    private let path: String
    private let lock = Locked()

    /// Opens (creating if needed) the `rejected` folder of `logDirectory`.
    public init(logDirectory: URL, limits: Limits = Limits(), logger: Logger = Logger(label: "spoor.upload")) throws(StorageError) {
        directory = logDirectory.appendingPathComponent(Self.folderName, isDirectory: true)
        path = directory.standardizedFileURL.path
        self.limits = limits
        self.logger = logger
        try FileIO.makeDirectory(path)
    }

    /// Reads what the `rejected` folder of `logDirectory` holds, without creating it.
    public static func summary(logDirectory: URL) -> Summary {
        let path = logDirectory.appendingPathComponent(folderName).standardizedFileURL.path
        return read(path)
    }

    /// What the folder holds now.
    public func summary() -> Summary {
        lock.withLock { Self.read(path) }
    }

    /// Keeps `frame` (the batch `id`, refused with `status`), dropping the oldest batches past the limits.
    /// A batch already kept (set aside again after a crash) is not kept twice.
    /// - Returns: the entries dropped to make room.
    @discardableResult
    public func setAside(frame: [UInt8], id: BatchID, status: Int, at time: Int64, durable: Bool = true) throws(StorageError) -> [Entry] {
        try lock.withLock { () throws(StorageError) -> [Entry] in
            var summary = Self.read(path)
            if summary.entries.contains(where: { $0.id == id.description }) { return [] }
            // Strictly increasing times, so the names sort in the order batches were set aside.
            let time = max(time, (summary.entries.last?.setAsideAt ?? .min) + 1)
            let name = StorageLayout.rejectedName(setAsideAt: time, id: id, status: status)
            try AtomicFile.write(frame, to: path + "/" + name, durable: durable)
            summary.entries.append(Entry(file: name, id: id.description, status: status, setAsideAt: time, bytes: frame.count))
            var dropped: [Entry] = []
            while summary.entries.count > limits.maxBatches || (summary.bytes > limits.maxBytes && summary.entries.count > 1) {
                let oldest = summary.entries.removeFirst()
                try FileIO.unlink(path + "/" + oldest.file)
                dropped.append(oldest)
            }
            if !dropped.isEmpty {
                let total = summary.dropped + dropped.count
                try AtomicFile.write(Array("\(total)\n".utf8), to: path + "/" + Self.droppedFileName, durable: durable)
                logger.error("spoor: the rejected area is full; its oldest batches were dropped", metadata: [
                    "dropped": "\(dropped.map(\.id).joined(separator: ","))", "droppedTotal": "\(total)",
                ])
            }
            return dropped
        }
    }

    private static func read(_ path: String) -> Summary {
        var entries: [Entry] = []
        for name in (try? FileIO.list(path)) ?? [] {
            guard let entry = parse(name, path: path) else { continue }
            entries.append(entry)
        }
        entries.sort { ($0.setAsideAt, $0.file) < ($1.setAsideAt, $1.file) }
        var dropped = 0
        if let bytes = try? FileIO.readFile(path + "/" + droppedFileName, limit: 64) {
            dropped = Int(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        return Summary(entries: entries, dropped: dropped)
    }

    private static func parse(_ name: String, path: String) -> Entry? {
        guard let parsed = StorageLayout.rejected(fromName: name) else { return nil }
        var info = stat()
        let bytes = stat(path + "/" + name, &info) == 0 ? Int(info.st_size) : 0
        return Entry(file: name, id: parsed.id.description, status: parsed.status, setAsideAt: parsed.setAsideAt, bytes: bytes)
    }
}
