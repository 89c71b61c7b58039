import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorNATS

/// `spoor-collector drain`: moves batches from a JetStream stream into SQL, each acknowledged after its commit.
struct DrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain",
        abstract: "Moves batches from a NATS JetStream stream into SQLite or PostgreSQL, exactly once."
    )

    @Option(help: "The stream: nats://HOST:PORT[,HOST:PORT…]/STREAM.")
    var from: String

    @Option(help: "The SQL store: sqlite:PATH or postgres://USER[:PASSWORD]@HOST:PORT/DB.")
    var store: String

    @Option(help: "The durable consumer; drains with the same name share the stream's batches.")
    var consumer = "spoor-drain"

    @Option(help: "The most batches fetched and committed at once.")
    var batch = 256

    @Option(name: .customLong("ack-wait"), help: "How long the stream waits for an acknowledgement before delivering a batch again (30s, …).")
    var ackWait = "30s"

    @Option(name: .customLong("store-timeout"), help: "Seconds a store operation may wait before it is retried.")
    var storeTimeout = 5.0

    @Option(name: .customLong("sqlite-sync"), help: "SQLite: normal or full (see serve).")
    var sqliteSync = "normal"

    @Option(name: .customLong("max-decompressed"), help: "Largest decompressed payload in bytes: at least the collectors' own (a larger batch is refused and terminated).")
    var maxDecompressed = 64 << 20

    @Flag(name: .customLong("exit-when-drained"), help: "Stop once the stream holds nothing more for the consumer.")
    var exitWhenDrained = false

    func run() async throws {
        let services = try makeServices()
        try await services.run()
    }

    /// The store and the drain, as the services of one group. Not async: the release build's compiler crashed
    /// splitting an async `run()` that called these typed-throwing parsers.
    private func makeServices() throws -> ServiceGroup {
        guard case .nats(let source) = try StoreLocation(parsing: from) else {
            throw ValidationError("--from must be nats://HOST:PORT[,HOST:PORT…]/STREAM")
        }
        guard batch > 0, storeTimeout > 0 else { throw ValidationError("--batch and --store-timeout must be positive") }
        guard let sync = SQLiteStore.Sync(rawValue: sqliteSync) else { throw ValidationError("--sqlite-sync must be full or normal") }
        var logger = Logger(label: "spoor-collector")
        logger.logLevel = .info
        let destination = try StoreLocation(parsing: store).openSQL(
            timeout: .milliseconds(Int64(storeTimeout * 1000)), maxConnections: 2, sqliteSync: sync, logger: logger
        )
        var options = Drain.Options()
        options.consumer = consumer
        options.batch = batch
        options.ackWait = try parseDuration(ackWait, option: "--ack-wait")
        options.exitWhenDrained = exitWhenDrained
        // Any frame a collector accepted: its body limit is not known here, so only the decompressed one applies.
        let drain = Drain(
            from: source, into: destination, options: options,
            limits: IngestLimits(maxBody: Int.max, maxDecompressed: maxDecompressed), logger: logger
        ) { line in
            // One line at a time, written at once, so scripts and tests can follow the progress.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        // The drain shuts down first, acknowledging what it committed, then the store closes.
        return ServiceGroup(configuration: .init(
            services: [
                .init(service: destination),
                .init(service: drain, successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        ))
    }
}
