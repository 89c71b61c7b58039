/// The store schema, shared by every store so that anyone can query either the same way.
///
/// `batches` has one row per accepted batch id; `events` one row per event, keyed by the batch
/// and the event's index in it. `lib` and `properties` hold the `spoor decode` JSON of those parts.
public enum Schema {
    /// The SQL dialects the schema is written for.
    public enum Dialect: Sendable {
        /// SQLite 3.
        case sqlite
        /// PostgreSQL.
        case postgres
    }

    /// The statements that create the tables when missing.
    public static func createStatements(_ dialect: Dialect) -> [String] {
        // `json`, not `jsonb`, in PostgreSQL too: it keeps the text as sent, which is cheaper to insert;
        // `->>` works on both, and a query or an index can cast to `jsonb` where needed.
        let json = "JSON"
        return [
            """
            CREATE TABLE IF NOT EXISTS batches (
                batch_id TEXT PRIMARY KEY,
                received_at BIGINT NOT NULL,
                event_count INTEGER NOT NULL,
                codec TEXT NOT NULL,
                bytes INTEGER NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS events (
                batch_id TEXT NOT NULL REFERENCES batches(batch_id),
                idx INTEGER NOT NULL,
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                time_ms BIGINT NOT NULL,
                distinct_id TEXT NOT NULL,
                anonymous_id TEXT NOT NULL,
                login_id TEXT,
                session_id TEXT,
                track_id TEXT NOT NULL,
                sequence BIGINT NOT NULL,
                lib \(json) NOT NULL,
                properties \(json) NOT NULL,
                PRIMARY KEY (batch_id, idx)
            )
            """,
        ]
    }

    /// The columns of `events`, in insert order.
    public static let eventColumns = [
        "batch_id", "idx", "name", "type", "time_ms", "distinct_id", "anonymous_id", "login_id",
        "session_id", "track_id", "sequence", "lib", "properties",
    ]
}
