/// What a store did with a batch.
public enum InsertResult: Sendable, Hashable {
    /// The batch and its events were committed.
    case stored
    /// The batch id was stored before; nothing was written.
    case duplicate
}

/// A store that cannot answer now (down, locked, full); the client should retry later.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Where batches go. Every implementation writes the batch row and its events in one transaction,
/// and a batch id already present stores nothing and answers `.duplicate`.
public protocol EventStore: Sendable {
    /// Stores a batch exactly once.
    func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult
    /// Checks that the store answers.
    func ping() async throws(StoreUnavailable)
    /// Releases connections; called once at shutdown.
    func close() async
}
