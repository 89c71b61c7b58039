import Foundation
import GRDB
import GRDBSQLite
import ServiceLifecycle
public import SpoorCollectorCore

/// The embedded store: one SQLite file in WAL mode (or memory, for tests and fuzzing).
///
/// Concurrent requests commit together (``GroupCommit``): one transaction per group, rows bound straight from the
/// batch's bytes into prepared statements. What a 200 survives is ``Sync``'s choice.
///
/// While ``run()`` runs, a connection of its own copies the WAL into the database in the background (a passive
/// checkpoint every 100 ms), so the writer seldom pays for a checkpoint inside a commit; the writer still
/// checkpoints past 64 MiB of WAL, which bounds the file. It serves ``insert(_:)`` from the moment it is created,
/// so tests and tools that open it on their own need not run it.
public final class SQLiteStore: GroupStore {
    /// When a commit reaches the disk.
    public enum Sync: String, Sendable, CaseIterable {
        /// Every commit syncs the WAL (`synchronous = FULL`): a 200 survives a power cut.
        case full
        /// Commits sync only at checkpoints (`synchronous = NORMAL`): a 200 survives the process being killed,
        /// but the last commits before a power cut may be lost.
        case normal
    }

    private let writer: any DatabaseWriter
    private let group: GroupCommit
    /// The file, for the background checkpoints; nil in memory.
    private let path: String?

    /// Opens or creates the database at `path`, or an in-memory one when `path` is nil. A write that waits
    /// longer than `busyTimeout` seconds for another process's lock fails as unavailable.
    public init(
        path: String?, busyTimeout: Double = 5, sync: Sync = .normal, group limits: GroupCommit.Limits = .init()
    ) throws(StoreUnavailable) {
        self.path = path
        let writer: any DatabaseWriter
        do {
            if let path {
                var configuration = Configuration()
                configuration.busyMode = .timeout(busyTimeout)
                configuration.prepareDatabase { db in
                    // A new file gets 32 KiB pages: rows are about 1 KiB, and the writer's time went mostly to the
                    // kernel's write path, one call per page (1.7× faster inserts than 4 KiB pages in
                    // spoor-collector-load's "SQLite alone"). An existing file keeps its page size.
                    try db.execute(sql: "PRAGMA page_size = 32768")
                }
                writer = try DatabasePool(path: path, configuration: configuration)  // DatabasePool uses WAL.
            } else {
                writer = try DatabaseQueue()
            }
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(sync == .full ? "FULL" : "NORMAL")")
                // 16,384 pages of 4 KiB: the background checkpoints keep the WAL below this under load.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 16384")
                for statement in Schema.createStatements(.sqlite) { try db.execute(sql: statement) }
            }
        } catch {
            throw StoreUnavailable("cannot open SQLite store: \(error)")
        }
        self.writer = writer
        group = GroupCommit(store: "sqlite", limits: limits) { batches throws(StoreUnavailable) in
            try await Self.insert(batches, into: writer)
        }
    }

    public func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult {
        try await group.insert(batch)
    }

    public func insertGroup(_ batches: [BatchRecord]) async throws(StoreUnavailable) -> [InsertResult] {
        try await Self.insert(batches, into: writer)
    }

    /// One transaction: each batch row first (`ON CONFLICT DO NOTHING`), its events only when it was new.
    private static func insert(_ batches: [BatchRecord], into writer: any DatabaseWriter) async throws(StoreUnavailable) -> [InsertResult] {
        do {
            return try await writer.write { db in
                let batchInsert = try db.cachedStatement(sql: """
                    INSERT INTO batches (batch_id, received_at, event_count, codec, bytes) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (batch_id) DO NOTHING
                    """)
                let placeholders = Array(repeating: "?", count: Schema.eventColumns.count).joined(separator: ", ")
                let eventInsert = try db.cachedStatement(
                    sql: "INSERT INTO events (\(Schema.eventColumns.joined(separator: ", "))) VALUES (\(placeholders))"
                )
                var results: [InsertResult] = []
                results.reserveCapacity(batches.count)
                for batch in batches {
                    var id = batch.batchID
                    var codec = batch.codec
                    let stored = try id.withUTF8 { id in
                        try codec.withUTF8 { codec in
                            let statement = batchInsert.sqliteStatement
                            sqlite3_reset(statement)
                            bind(statement, 1, UnsafeRawBufferPointer(id))
                            sqlite3_bind_int64(statement, 2, batch.receivedAt)
                            sqlite3_bind_int64(statement, 3, Int64(batch.eventCount))
                            bind(statement, 4, UnsafeRawBufferPointer(codec))
                            sqlite3_bind_int64(statement, 5, Int64(batch.bytes))
                            try step(statement, db)
                            guard sqlite3_changes(db.sqliteConnection) == 1 else { return false }
                            try insertEvents(batch.rows, batchID: UnsafeRawBufferPointer(id), eventInsert.sqliteStatement, db)
                            return true
                        }
                    }
                    results.append(stored ? .stored : .duplicate)
                }
                return results
            }
        } catch {
            throw StoreUnavailable("SQLite: \(error)")
        }
    }

    private static func insertEvents(_ rows: EventRows, batchID: UnsafeRawBufferPointer, _ statement: OpaquePointer?, _ db: Database) throws {
        let text = rows.text
        for row in rows.rows {
            sqlite3_reset(statement)
            bind(statement, 1, batchID)
            sqlite3_bind_int64(statement, 2, Int64(row.idx))
            bind(statement, 3, text, row.name)
            bind(statement, 4, text, row.type)
            sqlite3_bind_int64(statement, 5, row.timeMs)
            bind(statement, 6, text, row.distinctID)
            bind(statement, 7, text, row.anonymousID)
            bind(statement, 8, text, row.loginID)
            bind(statement, 9, text, row.sessionID)
            bind(statement, 10, text, row.trackID)
            sqlite3_bind_int64(statement, 11, row.sequence)
            bind(statement, 12, text, row.lib)
            bind(statement, 13, text, row.properties)
            try step(statement, db)
        }
    }

    /// Binds text that outlives the statement's step (SQLite does not copy it).
    @inline(__always)
    private static func bind(_ statement: OpaquePointer?, _ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        // A NULL pointer would bind NULL; an empty text needs a valid address.
        let pointer = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
        // A nil destructor is SQLITE_STATIC: the text stays valid until the statement is reset, so it is not copied.
        sqlite3_bind_text(statement, index, pointer.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
    }

    @inline(__always)
    private static func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: RowText, _ span: TextSpan) {
        if span.isNull {
            sqlite3_bind_null(statement, index)
        } else {
            bind(statement, index, text.bytes(span))
        }
    }

    private static func step(_ statement: OpaquePointer?, _ db: Database) throws {
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    public func ping() async throws(StoreUnavailable) {
        do {
            _ = try await writer.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        } catch {
            throw StoreUnavailable("SQLite: \(error)")
        }
    }

    /// Checkpoints in the background until the service group shuts down (gracefully or by cancellation), then
    /// closes the database: the WAL is checkpointed and the file left whole for the next start.
    public func run() async {
        if let path, let checkpointer = try? DatabaseQueue(path: path) {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    // A passive checkpoint takes no lock the writer waits for; the writer's commits go on meanwhile.
                    _ = try? await checkpointer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            try? checkpointer.close()
        } else {
            try? await gracefulShutdown()
        }
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
