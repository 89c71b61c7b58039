import ArgumentParser
import Foundation
import Logging
import SpoorCollectorCore
import SpoorCollectorNATS
import SpoorCollectorPostgres
import SpoorCollectorSQLite
import SpoorSystem

/// `spoor-collector`: the command line.
@main
struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spoor-collector",
        abstract: "Receives Spoor batch frames over HTTP and stores their events exactly once.",
        subcommands: [ServeCommand.self, DrainCommand.self, EventsCommand.self, FrameCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

/// Where events are stored, from `--store`.
enum StoreLocation: Equatable {
    case sqlite(path: String)
    case postgres(PostgresLocation)
    case nats(NATSLocation)

    var isPostgres: Bool {
        if case .postgres = self { true } else { false }
    }

    static let forms = "sqlite:PATH, postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=MODE] or nats://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT…]/STREAM (tls:// for TLS)"

    init(parsing text: String) throws(ValidationError) {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ValidationError("--store sqlite:PATH needs a path") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://"), let url = URLComponents(string: text),
                  let user = url.user, let host = url.host, let port = url.port,
                  case let database = String(url.path.dropFirst()), !database.isEmpty {
            var location = PostgresLocation(user: user, password: url.password, host: host, port: port, database: database)
            for item in url.queryItems ?? [] {
                switch (item.name, item.value) {
                case ("sslmode", let value?):
                    guard let mode = PostgresLocation.TLSMode(rawValue: value) else {
                        throw ValidationError("sslmode must be one of \(PostgresLocation.TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    location.tls = mode
                case ("sslrootcert", let value?):
                    location.rootCertificates = value
                default:
                    throw ValidationError("a PostgreSQL URL takes the parameters sslmode and sslrootcert, not \(item.name)")
                }
            }
            self = .postgres(location)
        } else if text.hasPrefix("nats://") || text.hasPrefix("tls://") {
            guard let location = NATSLocation(parsing: text) else {
                throw ValidationError("a NATS store is nats://HOST:PORT[,HOST:PORT…]/STREAM (a stream name of letters, digits, - and _), not \(redactingSecrets(text))")
            }
            self = .nats(location)
        } else {
            throw ValidationError("--store must be \(Self.forms), not \(redactingSecrets(text))")
        }
    }

    /// The location with a NATS store's certificate authorities and credentials file (`--nats-ca`, `--nats-creds`).
    func withNATS(certificateAuthorities: String?, credentialsFile: String?) -> Self {
        guard case .nats(var location) = self else { return self }
        location.certificateAuthorities = certificateAuthorities
        location.credentialsFile = credentialsFile
        return .nats(location)
    }

    /// Opens the store; an operation waiting longer than `timeout` on a lock or the server fails (503).
    /// The store is a service for the server's group: it releases its files and connections when the group stops.
    func open(
        timeout: Duration, maxConnections: Int, group: GroupCommit.Limits = .init(), sqliteSync: SQLiteStore.Sync = .normal,
        stream: StreamSettings = .init(), logger: Logger
    ) throws -> any BatchStore {
        switch self {
        case .sqlite, .postgres:
            return try openSQL(timeout: timeout, maxConnections: maxConnections, group: group, sqliteSync: sqliteSync, logger: logger)
        case .nats(let location):
            return try JetStreamStore(location, settings: stream, timeout: timeout)
        }
    }

    /// Opens a SQL store (the drain's destination); a NATS location is refused.
    func openSQL(
        timeout: Duration, maxConnections: Int, group: GroupCommit.Limits = .init(), sqliteSync: SQLiteStore.Sync = .normal,
        logger: Logger
    ) throws -> any GroupStore {
        switch self {
        case .sqlite(let path):
            return try SQLiteStore(path: path, busyTimeout: timeout.timeInterval, sync: sqliteSync, group: group)
        case .postgres(let location):
            return try PostgresStore(
                location, maxConnections: maxConnections, timeout: timeout, group: group, logger: logger
            )
        case .nats:
            throw ValidationError("this needs a SQL store: sqlite:PATH or postgres://USER[:PASSWORD]@HOST:PORT/DB")
        }
    }
}

/// `HOST:PORT` from `--listen`.
struct ListenAddress {
    var host: String
    var port: Int

    init(parsing text: String) throws(ValidationError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port), colon != text.startIndex else {
            throw ValidationError("--listen must be HOST:PORT, not \(text)")
        }
        host = String(text[..<colon])
        self.port = port
    }
}

/// `spoor-collector events --store STORE`: event counts by name, from SQL.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "events", abstract: "Prints stored event counts by name.")

    @Option(help: "The store: sqlite:PATH or postgres://USER[:PASSWORD]@HOST:PORT/DB.")
    var store = "sqlite:spoor-events.sqlite"

    func run() async throws {
        let counts: [(name: String, count: Int)]
        switch try StoreLocation(parsing: store) {
        case .nats:
            throw ValidationError("events counts what a SQL store holds; drain the stream into one first")
        case .sqlite(let path):
            counts = try SQLiteStore(path: path).countsByName()
        case .postgres(let location):
            let database = try PostgresStore(location, maxConnections: 1, logger: Logger(label: "spoor-collector"))
            counts = try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await database.run() }
                // Cancelling the pool's run closes its connection.
                defer { group.cancelAll() }
                return try await database.countsByName()
            }
        }
        for (name, count) in counts { print("\(count)\t\(name)") }
    }
}

/// A duration from the command line: a number with `ms`, `s`, `m` or `h` (`24h`, `90s`, `500ms`), or seconds.
func parseDuration(_ text: String, option: String) throws(ValidationError) -> Duration {
    let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
    for unit in units where text.hasSuffix(unit.suffix) {
        if let value = Double(text.dropLast(unit.suffix.count)), value >= 0 { return .milliseconds(Int64(value * unit.seconds * 1000)) }
    }
    guard let seconds = Double(text), seconds >= 0 else {
        throw ValidationError("\(option) must be a duration such as 24h, 90s or 500ms, not \(text)")
    }
    return .milliseconds(Int64(seconds * 1000))
}
