import Foundation
import GRDB

/// The embedded store: one SQLite file in WAL mode (or memory, for tests and fuzzing).
public final class SQLiteStore: EventStore {
    private let writer: any DatabaseWriter

    /// Opens or creates the database at `path`, or an in-memory one when `path` is nil. A write that waits
    /// longer than `busyTimeout` for another process's lock fails as unavailable.
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

    public func close() async {
        if let pool = writer as? DatabasePool { try? pool.close() }
        if let queue = writer as? DatabaseQueue { try? queue.close() }
    }

    /// Event counts by name, most frequent first (for `spoor-collector events` and the demo).
    public func countsByName() throws -> [(name: String, count: Int)] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT name, COUNT(*) AS n FROM events GROUP BY name ORDER BY n DESC, name")
                .map { (name: $0["name"], count: $0["n"]) }
        }
    }
}
