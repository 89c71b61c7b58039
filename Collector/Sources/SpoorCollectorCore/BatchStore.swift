public import ServiceLifecycle

/// What a store did with a batch.
public enum InsertResult: Sendable, Hashable {
    /// The batch and its events were committed.
    case stored
    /// The batch id was stored before; nothing was written.
    case duplicate
}

/// A store that cannot answer now (down, locked, full, too slow); the client should retry later.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Where the collector puts batches: SQLite (`SQLiteStore`) or PostgreSQL (`PostgresStore`).
///
/// Every implementation writes the batch row and its events in one transaction, and a batch id already present
/// stores nothing and answers ``InsertResult/duplicate``, so a batch is stored exactly once however often a
/// client sends it.
///
/// A store is a `Service`: ``run()`` holds what the store keeps in the background (a connection pool) and
/// releases it (closes its files and connections) when the service group shuts down gracefully or is cancelled.
/// The server registers the store before the HTTP server, so the group stops the HTTP server first: the batches in
/// flight are committed before the store closes. A store that keeps nothing in the background serves
/// ``insert(_:)`` without ``run()``; one that needs it says so.
public protocol BatchStore: Service {
    /// Stores a batch exactly once; 200 is answered only after this returned.
    func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult
    /// Checks that the store answers, for `/healthz`.
    func ping() async throws(StoreUnavailable)
}
