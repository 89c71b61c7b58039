import ArgumentParser
import Foundation
import SpoorCollectorCore

/// `spoor-collector`: the command line (docs/collector.md).
@main
struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spoor-collector",
        abstract: "Receives Spoor batch frames over HTTP and stores their events exactly once.",
        subcommands: [ServeCommand.self, EventsCommand.self, FrameCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

/// Where events are stored, from `--store`.
enum StoreLocation: Equatable {
    case sqlite(path: String)
    case postgres(user: String, host: String, port: Int, database: String)

    init(parsing text: String) throws(ValidationError) {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ValidationError("--store sqlite:PATH needs a path") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://"), let url = URLComponents(string: text),
                  let user = url.user, let host = url.host, let port = url.port,
                  case let database = String(url.path.dropFirst()), !database.isEmpty {
            self = .postgres(user: user, host: host, port: port, database: database)
        } else {
            throw ValidationError("--store must be sqlite:PATH or postgres://USER@HOST:PORT/DB, not \(text)")
        }
    }

    func open() throws -> any EventStore {
        switch self {
        case .sqlite(let path): return try SQLiteStore(path: path)
        case .postgres: throw ValidationError("the PostgreSQL store is not built into this collector yet")
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

/// `spoor-collector events --store sqlite:PATH`: event counts by name, from SQL.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "events", abstract: "Prints stored event counts by name.")

    @Option(help: "The store: sqlite:PATH.")
    var store = "sqlite:spoor-events.sqlite"

    func run() throws {
        guard case .sqlite(let path) = try StoreLocation(parsing: store) else {
            throw ValidationError("events reads a sqlite: store")
        }
        let database = try SQLiteStore(path: path)
        for (name, count) in try database.countsByName() { print("\(count)\t\(name)") }
    }
}
