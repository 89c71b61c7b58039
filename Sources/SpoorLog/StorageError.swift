/// Why the event log or its outbox could not do what was asked.
///
/// The log reports I/O trouble through its logger and counters and keeps
/// working in memory; this error reaches callers only from the calls that
/// promise durability (``EventLog/sync()``, sealing and releasing batches)
/// and from opening a log with an invalid configuration or a directory that
/// another log already holds.
public struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of storage failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A configuration value is out of range.
        case invalidConfiguration
        /// The storage directory cannot be created, opened or written.
        case directoryUnavailable
        /// Another open log holds the directory's lock.
        case directoryInUse
        /// The file system is full or a file-size limit was reached.
        case diskFull
        /// A read, write, sync, rename or delete failed.
        case ioFailure
        /// A file in the directory is not what its name says it is.
        case corruptFile
        /// The outbox holds as many sealed batches as it may.
        case outboxFull
        /// No pending batch has this id.
        case unknownBatch
        /// The log was closed.
        case closed
    }

    /// What went wrong.
    public var kind: Kind
    /// The file or directory concerned, if any.
    public var path: String
    /// The `errno` of the failed system call, or 0.
    public var code: Int32
    /// A human-readable explanation.
    public var reason: String

    /// Creates a storage error.
    public init(_ kind: Kind, path: String = "", code: Int32 = 0, reason: String) {
        self.kind = kind
        self.path = path
        self.code = code
        self.reason = reason
    }

    public var description: String {
        var text = "\(kind.rawValue): \(reason)"
        if !path.isEmpty { text += " (\(path))" }
        return text
    }
}

/// What the log has counted since its directory was created; persisted with the log.
public struct LogCounters: Sendable, Hashable, Codable {
    /// Records handed to ``EventLog/append(_:)`` since the log was opened (not persisted).
    public var appended: UInt64 = 0
    /// Records dropped, oldest first, because the log reached a cap.
    public var dropped: UInt64 = 0
    /// Corrupt regions skipped (each holds at least one record) at recovery or when reading.
    public var corrupt: UInt64 = 0
    /// Torn tails (a record cut short by a crash) truncated at recovery.
    public var tornTails: UInt64 = 0
    /// Writes, syncs and file operations that failed.
    public var writeErrors: UInt64 = 0
    /// Files moved aside because they are not what their name claims (corrupt segments, unreadable batches).
    public var quarantined: UInt64 = 0
    /// Batches sealed into the outbox.
    public var sealed: UInt64 = 0
    /// Batches released after upload.
    public var released: UInt64 = 0
    /// Batches set aside as rejected by the collector.
    public var rejected: UInt64 = 0
    /// Batches this log took from other processes' logs in a shared storage directory to upload (not persisted).
    public var claimed: UInt64 = 0
    /// Batches of this log that another process claimed before this one sent them: theirs to upload now, neither
    /// lost nor released here (not persisted).
    public var claimedAway: UInt64 = 0

    /// Creates zeroed counters.
    public init() {}
}
