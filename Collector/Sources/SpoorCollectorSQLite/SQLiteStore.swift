import Foundation
import GRDB
import ServiceLifecycle
public import SpoorCollectorCore

/// The embedded store: one SQLite file in WAL mode (or memory, for tests and fuzzing).
///
/// It serves ``insert(_:)`` from the moment it is created; ``run()`` only closes the database when the service
/// group shuts down, so tests and tools that open it on their own need not run it.
public final class SQLiteStore: BatchStore {
    private let writer: any DatabaseWriter

    /// Opens or creates the database at `path`, or an in-memory one when `path` is nil. A write that waits
    /// longer than `busyTimeout` seconds for another process's lock fails as unavailable.
    public init(path: String?, busyTimeout: Double = 5) throws(StoreUnavailable) {
        do {
            if let path {
                var configuration = Configuration()
                configuration.busyMode = .timeout(busyTimeout)
                writer = try DatabasePool(path: path, configuration: configuration)  // DatabasePool uses WAL.
            } else {
                writer = try DatabaseQueue()
            }
            try writer.write { db in
                for statement in Schema.createStatements(.sqlite) { try db.execute(sql: statement) }
            }
        } catch {
            throw StoreUnavailable("cannot open SQLite store: \(error)")
        }
    }

    public func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult {
        do {
            return try await writer.write { db in
                try db.execute(
                    sql: "INSERT INTO batches (batch_id, received_at, event_count, codec, bytes) VALUES (?, ?, ?, ?, ?) ON CONFLICT (batch_id) DO NOTHING",
                    arguments: [batch.batchID, batch.receivedAt, batch.events.count, batch.codec, batch.bytes]
                )
                guard db.changesCount == 1 else { return .duplicate }
                let placeholders = Array(repeating: "?", count: Schema.eventColumns.count).joined(separator: ", ")
                let statement = try db.cachedStatement(
                    sql: "INSERT INTO events (\(Schema.eventColumns.joined(separator: ", "))) VALUES (\(placeholders))"
                )
                for row in batch.events {
                    try statement.execute(arguments: [
                        batch.batchID, row.idx, row.name, row.type, row.timeMs, row.distinctID, row.anonymousID,
                        row.loginID, row.sessionID, row.trackID, row.sequence, row.lib, row.properties,
                    ])
                }
                return .stored
            }
        } catch {
            throw StoreUnavailable("SQLite: \(error)")
        }
    }

    public func ping() async throws(StoreUnavailable) {
        do {
            _ = try await writer.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        } catch {
            throw StoreUnavailable("SQLite: \(error)")
        }
    }

    /// Waits for the service group to shut down (gracefully or by cancellation), then closes the database: the
    /// WAL is checkpointed and the file left whole for the next start.
    public func run() async {
        try? await gracefulShutdown()
        // A close that fails leaves the file as a crash would, which SQLite's WAL recovery handles on the next open.
        try? writer.close()
    }

    /// Event counts by name, most frequent first (for `spoor-collector events` and the demo).
    public func countsByName() throws -> [(name: String, count: Int)] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT name, COUNT(*) AS n FROM events GROUP BY name ORDER BY n DESC, name")
                .map { (name: $0["name"], count: $0["n"]) }
        }
    }
}
