public import Logging
public import SpoorCollectorCore
import PostgresNIO
import Synchronization

/// Where a PostgreSQL store is: `postgres://USER[:PASSWORD]@HOST:PORT/DB`.
public struct PostgresLocation: Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The password, if the server asks for one.
    public var password: String?
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The database name.
    public var database: String

    /// Creates a location.
    public init(user: String, password: String? = nil, host: String, port: Int, database: String) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
    }
}

/// The store for scale: any number of collectors share one PostgreSQL database through pooled connections.
///
/// A batch is one statement, so one transaction: the `batches` row is inserted with
/// `ON CONFLICT (batch_id) DO NOTHING`, and the events are inserted from `UNNEST` arrays joined to what that
/// insert returned, so a batch id already present (or being committed by another collector at the same
/// moment: the second insert waits on the first's index entry, then does nothing) stores no event.
///
/// The connection pool works while ``run()`` runs: register the store in the server's service group (or run it
/// in a task of its own) before asking it anything.
public final class PostgresStore: BatchStore {
    private let client: PostgresClient
    private let timeout: Duration
    private let logger: Logger
    private let schemaReady = Atomic<Bool>(false)

    /// A pool of at most `maxConnections` to `location`; each operation fails as unavailable after `timeout`.
    ///
    /// Nothing is sent until the first operation, so a collector starts while its database is down and answers 503
    /// until it is back. The tables are created, when missing, by the first operation that reaches the server.
    public init(_ location: PostgresLocation, maxConnections: Int = 8, timeout: Duration = .seconds(5), logger: Logger) {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable
        )
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = timeout
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.timeout = timeout
        self.logger = logger
    }

    /// Runs the connection pool until the service group shuts down, then closes its connections. Call it once.
    public func run() async {
        await client.run()
    }

    public func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult {
        try await withTimeout { [self] in
            try await ensureSchema()
            return try await withConnection { connection in
                let rows = try await connection.query(Self.insertQuery(batch), logger: logger)
                for try await inserted in rows.decode(Int.self) { return inserted == 1 ? .stored : .duplicate }
                throw StoreUnavailable("PostgreSQL: the insert returned no row")
            }
        }
    }

    public func ping() async throws(StoreUnavailable) {
        try await withTimeout { [self] in
            try await ensureSchema()
            try await withConnection { connection in _ = try await connection.query("SELECT 1", logger: logger) }
        }
    }

    /// Event counts by name, most frequent first (for `spoor-collector events`).
    public func countsByName() async throws(StoreUnavailable) -> [(name: String, count: Int)] {
        try await withTimeout { [self] in
            try await ensureSchema()
            return try await withConnection { connection in
                var counts: [(name: String, count: Int)] = []
                let rows = try await connection.query(
                    "SELECT name, COUNT(*) AS n FROM events GROUP BY name ORDER BY n DESC, name", logger: logger
                )
                for try await (name, count) in rows.decode((String, Int).self) { counts.append((name, count)) }
                return counts
            }
        }
    }

    /// Creates the tables once per process, under an advisory lock so that collectors starting together do not race.
    private func ensureSchema() async throws {
        guard !schemaReady.load(ordering: .acquiring) else { return }
        try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(495778738034)", logger: logger)
                for statement in Schema.createStatements(.postgres) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
        }
        schemaReady.store(true, ordering: .releasing)
    }

    /// Runs `work` on a pooled connection that is closed if the task is cancelled meanwhile.
    ///
    /// postgres-nio does not stop a query when its task is cancelled, and a server that hangs (stopped, or
    /// behind a partitioned network) never answers it; closing the connection fails the query at once. The pool
    /// then opens a new connection for the next operation. A statement that had reached the server may still
    /// commit: the client's retry is then answered as a duplicate, so nothing is stored twice.
    private func withConnection<Result: Sendable>(
        _ work: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            try await withTaskCancellationHandler {
                try await work(connection)
            } onCancel: {
                connection.close().whenComplete { _ in }
            }
        }
    }

    /// Runs `operation` within the store's timeout; any failure is the store being unavailable.
    private func withTimeout<Result: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Result
    ) async throws(StoreUnavailable) -> Result {
        do {
            return try await withDeadline(timeout, operation)
        } catch let error as StoreUnavailable {
            throw error
        } catch is DeadlineExceeded {
            throw StoreUnavailable("PostgreSQL did not answer within \(timeout)")
        } catch {
            throw StoreUnavailable("PostgreSQL: \(String(reflecting: error))")
        }
    }

    /// The one statement that stores a batch; it returns 1 when stored, 0 when the batch id was there.
    static func insertQuery(_ batch: BatchRecord) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 17)
        binds.append(batch.batchID)
        binds.append(batch.receivedAt)
        binds.append(Int32(clamping: batch.events.count))
        binds.append(batch.codec)
        binds.append(Int32(clamping: batch.bytes))
        let events = batch.events
        binds.append(events.map { Int32(clamping: $0.idx) })
        binds.append(events.map(\.name))
        binds.append(events.map(\.type))
        binds.append(events.map(\.timeMs))
        binds.append(events.map(\.distinctID))
        binds.append(events.map(\.anonymousID))
        binds.append(NullableTextArray(events.map(\.loginID)))
        binds.append(NullableTextArray(events.map(\.sessionID)))
        binds.append(events.map(\.trackID))
        binds.append(events.map(\.sequence))
        binds.append(events.map(\.lib))
        binds.append(events.map(\.properties))
        return PostgresQuery(unsafeSQL: insertSQL, binds: binds)
    }

    static let insertSQL = """
        WITH batch AS (
            INSERT INTO batches (batch_id, received_at, event_count, codec, bytes)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (batch_id) DO NOTHING
            RETURNING batch_id
        ), stored AS (
            INSERT INTO events (\(Schema.eventColumns.joined(separator: ", ")))
            SELECT batch.batch_id, e.idx, e.name, e.type, e.time_ms, e.distinct_id, e.anonymous_id, e.login_id,
                   e.session_id, e.track_id, e.sequence, e.lib::json, e.properties::json
            FROM batch, UNNEST($6::int4[], $7::text[], $8::text[], $9::int8[], $10::text[], $11::text[],
                               $12::text[], $13::text[], $14::text[], $15::int8[], $16::text[], $17::text[])
                AS e(idx, name, type, time_ms, distinct_id, anonymous_id, login_id, session_id, track_id,
                     sequence, lib, properties)
        )
        SELECT count(*)::int8 FROM batch
        """
}

/// A `text[]` bind with NULL elements, which postgres-nio's `[String]` cannot carry (binary array format).
struct NullableTextArray: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    var elements: [String?]

    init(_ elements: [String?]) { self.elements = elements }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)  // dimensions
        buffer.writeInteger(elements.contains(nil) ? 1 : 0, as: Int32.self)  // has NULLs
        buffer.writeInteger(PostgresDataType.text.rawValue)  // element type
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))  // length of the one dimension
        buffer.writeInteger(1, as: Int32.self)  // its lower bound
        for element in elements {
            if let element {
                buffer.writeInteger(Int32(element.utf8.count))
                buffer.writeString(element)
            } else {
                buffer.writeInteger(-1, as: Int32.self)
            }
        }
    }
}
