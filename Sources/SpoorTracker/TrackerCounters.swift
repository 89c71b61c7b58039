import SpoorLog
public import SpoorUpload

/// Counts the app can read to see what happened to its events.
///
/// `accepted` = events handed on to be stored; each of them is either in the log, or counted in
/// `droppedWhenBufferFull`, `droppedByLog` or `droppedByHook`, or rejected by the hook (``ValidationRule/hookThrew``,
/// ``ValidationRule/hookInvalid``). Other rejected events were never accepted.
public struct TrackerCounters: Sendable, Hashable {
    /// Events (including profile records and `$SignUp`) that passed validation and were handed on.
    public var accepted: Int
    /// Rejected events, by the rule they broke.
    public var rejected: [ValidationRule: Int]
    /// Events the log dropped (full, or a write failed).
    public var droppedByLog: Int
    /// Events ``Configuration/Tracking/beforeRecord`` dropped.
    public var droppedByHook: Int
    /// Events tracked after ``Tracker/shutdown(timeout:)`` began, which were not recorded.
    public var droppedAfterShutdown: Int
    /// Accepted events dropped from memory, oldest first, because ``Configuration/Storage/maxBufferedEvents``
    /// were waiting for the writer and ``Configuration/Storage/whenBufferIsFull`` is
    /// ``Configuration/BufferPolicy/dropOldest``. Each is dropped whole, before any of it is written.
    public var droppedWhenBufferFull: Int = 0
    /// Corrupt records the log found and skipped.
    public var corrupt: Int
    /// Times the state file was unreadable and had to be replaced.
    public var corruptStateFiles: Int
    /// What the uploader did: delivered batches, events and bytes, retries, rejected batches, pauses, the last
    /// status and the next attempt. Nil without a ``Configuration/Upload/serverURL``.
    public var upload: UploadCounters? = nil

    /// All rejected events, whatever the rule.
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }
}
