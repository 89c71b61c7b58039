/// When appended records are forced to stable storage.
///
/// Whatever the setting, an append hands its records to the operating system
/// before it returns, so a crash of the process (`kill -9`) loses nothing; the
/// setting decides what survives a crash of the machine or a power cut.
public enum Durability: Sendable, Hashable {
    /// Only ``EventLog/sync()`` forces records to disk.
    case none
    /// Records are forced to disk by the first append after `interval` has passed since the last sync.
    case batched(interval: Duration)
    /// Every write group is forced to disk (`fdatasync`) before ``EventLog/append(_:)`` returns.
    case always
}
