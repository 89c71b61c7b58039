public import Logging
public import SpoorCollectorCore
import NIOSSL
import PostgresNIO
import Synchronization

/// Whether this process has created the tables.
private final class SchemaReady: Sendable {
    let done = Atomic<Bool>(false)
}

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
    /// Whether and how the connection is encrypted (`sslmode`).
    public var tls: TLSMode
    /// The certificate authorities that `verify-ca` and `verify-full` trust (`sslrootcert`, PEM); nil for the
    /// system's.
    public var rootCertificates: String?

    /// `sslmode`, as libpq names it.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Never encrypted.
        case disable
        /// Encrypted when the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// Always encrypted, without checking the server's certificate: safe from listeners, not from an impostor.
        case require
        /// Always encrypted, the certificate signed by a trusted authority, whatever its name.
        case verifyCA = "verify-ca"
        /// Always encrypted, the certificate signed by a trusted authority and naming the host: the only mode safe
        /// across a network an attacker may be on.
        case verifyFull = "verify-full"
    }

    /// Creates a location.
    public init(user: String, password: String? = nil, host: String, port: Int, database: String,
                tls: TLSMode = .prefer, rootCertificates: String? = nil) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
        self.tls = tls
        self.rootCertificates = rootCertificates
    }

    /// The client's TLS setting for this location.
    func clientTLS() throws -> PostgresClient.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let rootCertificates {
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificates))
        }
        switch tls {
        case .disable:
            return .disable
        case .prefer, .require:
            configuration.certificateVerification = .none
            return tls == .prefer ? .prefer(configuration) : .require(configuration)
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
            return .require(configuration)
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
            return .require(configuration)
        }
    }
}

/// The store for scale: any number of collectors share one PostgreSQL database through pooled connections.
///
/// Concurrent requests commit together (``GroupCommit``), one group at a time per collector, in one statement: the
/// group's `batches` rows are inserted, in batch id order, with `ON CONFLICT (batch_id) DO NOTHING RETURNING
/// batch_id`, and only the returned batches' events are inserted, from 13 `UNNEST` arrays bound in binary (faster
/// here than `COPY` into a staging table then `INSERT … SELECT`: docs/collector.md, "Measured"). A batch id already present, or being committed by
/// another collector at the same moment (the second insert waits on the first's index entry, then does nothing),
/// stores no event. Inserting in id order keeps two collectors' groups from deadlocking on each other's ids.
///
/// The connection pool works while ``run()`` runs: register the store in the server's service group (or run it
/// in a task of its own) before asking it anything.
public final class PostgresStore: GroupStore {
    private let database: Database
    private let group: GroupCommit

    /// A pool of at most `maxConnections` to `location`; each operation fails as unavailable after `timeout`.
    ///
    /// Nothing is sent until the first operation, so a collector starts while its database is down and answers 503
    /// until it is back. The tables are created, when missing, by the first operation that reaches the server.
    public init(
        _ location: PostgresLocation, maxConnections: Int = 8, timeout: Duration = .seconds(5),
        group limits: GroupCommit.Limits = .init(), logger: Logger
    ) throws(StoreUnavailable) {
        let tls: PostgresClient.Configuration.TLS
        do {
            tls = try location.clientTLS()
        } catch {
            throw StoreUnavailable("sslrootcert \(location.rootCertificates ?? "") is not a PEM file of certificates: \(error)")
        }
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls
        )
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = timeout
        let database = Database(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), timeout: timeout, logger: logger
        )
        self.database = database
        group = GroupCommit(store: "postgres", limits: limits) { batches throws(StoreUnavailable) in
            try await database.insertGroup(batches)
        }
    }

    /// Runs the connection pool until the service group shuts down, then closes its connections. Call it once.
    public func run() async {
        await database.client.run()
    }

    public func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult {
        try await group.insert(batch)
    }

    public func insertGroup(_ batches: [BatchRecord]) async throws(StoreUnavailable) -> [InsertResult] {
        try await database.insertGroup(batches)
    }

    public func ping() async throws(StoreUnavailable) {
        try await database.withTimeout { [database] in
            try await database.ensureSchema()
            try await database.withConnection { connection in _ = try await connection.query("SELECT 1", logger: database.logger) }
        }
    }

    /// Event counts by name, most frequent first (for `spoor-collector events`).
    public func countsByName() async throws(StoreUnavailable) -> [(name: String, count: Int)] {
        try await database.withTimeout { [database] in
            try await database.ensureSchema()
            return try await database.withConnection { connection in
                var counts: [(name: String, count: Int)] = []
                let rows = try await connection.query(
                    "SELECT name, COUNT(*) AS n FROM events GROUP BY name ORDER BY n DESC, name", logger: database.logger
                )
                for try await (name, count) in rows.decode((String, Int).self) { counts.append((name, count)) }
                return counts
            }
        }
    }
}

/// The pool and how the store uses it, shared by the store and its group commit.
private struct Database: Sendable {
    let client: PostgresClient
    let timeout: Duration
    let logger: Logger
    let schema = SchemaReady()

    /// One group in one transaction; the batches' ids are distinct.
    func insertGroup(_ batches: [BatchRecord]) async throws(StoreUnavailable) -> [InsertResult] {
        let stored: Set<String> = try await withTimeout { [self] in
            try await ensureSchema()
            return try await withConnection { connection in
                var stored = Set<String>()
                let rows = try await connection.query(Self.insertQuery(batches), logger: logger)
                for try await id in rows.decode(String.self) { stored.insert(id) }
                return stored
            }
        }
        return batches.map { stored.contains($0.batchID) ? .stored : .duplicate }
    }

    /// Creates the tables once per process, under an advisory lock so that collectors starting together do not race.
    func ensureSchema() async throws {
        guard !schema.done.load(ordering: .acquiring) else { return }
        try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(495778738034)", logger: logger)
                for statement in Schema.createStatements(.postgres) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
        }
        schema.done.store(true, ordering: .releasing)
    }

    /// Runs `work` on a pooled connection that is closed if the task is cancelled meanwhile.
    ///
    /// postgres-nio does not stop a query when its task is cancelled, and a server that hangs (stopped, or
    /// behind a partitioned network) never answers it; closing the connection fails the query at once. The pool
    /// then opens a new connection for the next operation. A statement that had reached the server may still
    /// commit: the client's retry is then answered as a duplicate, so nothing is stored twice.
    func withConnection<Result: Sendable>(_ work: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await withTaskCancellationHandler {
                try await work(connection)
            } onCancel: {
                connection.close().whenComplete { _ in }
            }
        }
    }

    /// Runs `operation` within the store's timeout; any failure is the store being unavailable.
    func withTimeout<Result: Sendable>(
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

    /// The one statement that stores a group; it returns the ids of the batches it stored.
    static func insertQuery(_ batches: [BatchRecord]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 18)
        binds.append(batches.map(\.batchID))
        binds.append(batches.map(\.receivedAt))
        binds.append(batches.map { Int32(clamping: $0.eventCount) })
        binds.append(batches.map(\.codec))
        binds.append(batches.map { Int32(clamping: $0.bytes) })
        binds.append(EventColumn(batches, .batchID))
        binds.append(EventIntColumn(batches, \.idx))
        binds.append(EventColumn(batches, .text(\.name)))
        binds.append(EventColumn(batches, .text(\.type)))
        binds.append(EventBigintColumn(batches, \.timeMs))
        binds.append(EventColumn(batches, .text(\.distinctID)))
        binds.append(EventColumn(batches, .text(\.anonymousID)))
        binds.append(EventColumn(batches, .text(\.loginID)))
        binds.append(EventColumn(batches, .text(\.sessionID)))
        binds.append(EventColumn(batches, .text(\.trackID)))
        binds.append(EventBigintColumn(batches, \.sequence))
        binds.append(EventColumn(batches, .text(\.lib)))
        binds.append(EventColumn(batches, .text(\.properties)))
        return PostgresQuery(unsafeSQL: insertSQL, binds: binds)
    }

    static let insertSQL = """
        WITH batch AS (
            INSERT INTO batches (batch_id, received_at, event_count, codec, bytes)
            SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int4[], $4::text[], $5::int4[]) ORDER BY 1
            ON CONFLICT (batch_id) DO NOTHING
            RETURNING batch_id
        ), stored AS (
            INSERT INTO events (\(Schema.eventColumns.joined(separator: ", ")))
            SELECT e.batch_id, e.idx, e.name, e.type, e.time_ms, e.distinct_id, e.anonymous_id, e.login_id,
                   e.session_id, e.track_id, e.sequence, e.lib::json, e.properties::json
            FROM UNNEST($6::text[], $7::int4[], $8::text[], $9::text[], $10::int8[], $11::text[], $12::text[],
                        $13::text[], $14::text[], $15::text[], $16::int8[], $17::text[], $18::text[])
                AS e(batch_id, idx, name, type, time_ms, distinct_id, anonymous_id, login_id, session_id, track_id,
                     sequence, lib, properties)
            JOIN batch ON e.batch_id = batch.batch_id
        )
        SELECT batch_id FROM batch
        """
}
