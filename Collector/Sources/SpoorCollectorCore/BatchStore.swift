public import ServiceLifecycle

/// What a store did with a batch.
public enum InsertResult: Sendable, Hashable {
    /// The batch and its events were committed.
    case stored
    /// The batch id was stored before; nothing was written.
    case duplicate
}

/// A store that cannot answer now (down, locked, full, too slow); the client should retry later.
public struct StoreUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Where the collector puts batches: SQLite (`SQLiteStore`), PostgreSQL (`PostgresStore`) or a NATS JetStream
/// stream (`JetStreamStore`).
///
/// Every implementation stores a batch exactly once by its id: a batch id already present stores nothing and
/// answers ``InsertResult/duplicate``, so a batch is stored once however often a client sends it.
///
/// A store is a `Service`: ``run()`` holds what the store keeps in the background (a connection pool) and
/// releases it (closes its files and connections) when the service group shuts down gracefully or is cancelled.
/// The server registers the store before the HTTP server, so the group stops the HTTP server first: the batches in
/// flight are committed before the store closes. A store that keeps nothing in the background serves
/// ``insert(_:)`` without ``run()``; one that needs it says so.
public protocol BatchStore: Service {
    /// Whether the store keeps each batch's frame as it came (a log of frames, drained into SQL later) rather than
    /// its rows: then ingest checks every event but writes no rows.
    var keepsFrames: Bool { get }
    /// The largest frame the store can take, or `Int.max`; a larger body is answered 413 like one past the
    /// server's `--max-body` (the client splits it), not 503 again and again.
    var maxFrameBytes: Int { get }
    /// Stores a batch exactly once; 200 is answered only after this returned.
    func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult
    /// Checks that the store answers, for `/healthz`.
    func ping() async throws(StoreUnavailable)
}

extension BatchStore {
    public var keepsFrames: Bool { false }
    public var maxFrameBytes: Int { .max }
}

/// A SQL store, which commits a group of batches in one transaction: the unit of its group commit
/// (``GroupCommit``) and of a drain from a stream.
public protocol GroupStore: BatchStore {
    /// Commits `batches`, whose ids differ, in one transaction, and says for each whether it was stored or was
    /// there before. Nothing is stored when it throws.
    func insertGroup(_ batches: [BatchRecord]) async throws(StoreUnavailable) -> [InsertResult]
}
