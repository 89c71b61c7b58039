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

    @Option(help: "The stream: nats://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT…]/STREAM, or tls://… (default: $SPOOR_STREAM).")
    var from: String?

    @Option(help: "The SQL store: sqlite:PATH or postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=…] (default: $SPOOR_STORE).")
    var store: String?

    @Option(name: .customLong("nats-ca"), help: "NATS: the certificate authorities of the servers' certificates, PEM (with tls://).")
    var natsCA: String?

    @Option(name: .customLong("nats-creds"), help: "NATS: a credentials file (user JWT and NKey seed).")
    var natsCredentials: String?

    @Option(help: "The durable consumer; drains with the same name share the stream's batches.")
    var consumer = "spoor-drain"

    @Option(help: "The most batches fetched and committed at once.")
    var batch = 256

    @Option(name: .customLong("ack-wait"), help: "How long the stream waits for an acknowledgement before delivering a batch again (30s, …).")
    var ackWait = "30s"

    @Option(name: .customLong("store-timeout"), help: "Seconds a store operation may wait before it is retried.")
    var storeTimeout = 5.0

    @Option(name: .customLong("batch-bytes"), help: "The most bytes fetched at once: at least the NATS servers' largest message.")
    var batchBytes = 64 << 20

    @Option(name: .customLong("max-decompressed"), help: "Largest decompressed payload in bytes: at least the collectors' own (a larger batch is refused and terminated).")
    var maxDecompressed = 4 << 20

    @Flag(name: .customLong("exit-when-drained"), help: "Stop once the stream holds nothing more for the consumer.")
    var exitWhenDrained = false

    func run() async throws {
        let services = try makeServices()
        try await services.run()
    }

    /// The store and the drain, as the services of one group. Not async: the release build's compiler crashed
    /// splitting an async `run()` that called these typed-throwing parsers.
    private func makeServices() throws -> ServiceGroup {
        let environment = ProcessInfo.processInfo.environment
        guard let from = from ?? environment["SPOOR_STREAM"], let store = store ?? environment["SPOOR_STORE"] else {
            throw ValidationError("a drain needs --from (or SPOOR_STREAM) and --store (or SPOOR_STORE)")
        }
        guard case .nats(let source) = try StoreLocation(parsing: from)
                .withNATS(certificateAuthorities: natsCA, credentialsFile: natsCredentials) else {
            throw ValidationError("--from must be nats://HOST:PORT[,HOST:PORT…]/STREAM or tls://…")
        }
        guard (1...10_000).contains(batch), storeTimeout > 0, (1...IngestLimits.maxDecompressedLimit).contains(maxDecompressed) else {
            throw ValidationError("--batch must be from 1 to 10000, --store-timeout positive, --max-decompressed at most \(IngestLimits.maxDecompressedLimit)")
        }
        guard batchBytes >= 1 << 20 else { throw ValidationError("--batch-bytes must be at least 1 MiB") }
        var logger = Logger(label: "spoor-collector")
        logger.logLevel = .info
        let destination = try StoreLocation(parsing: store).openSQL(
            // A batch is acknowledged, and leaves the stream, once committed: so SQLite syncs every commit.
            timeout: .milliseconds(Int64(storeTimeout * 1000)), maxConnections: 2, sqliteSync: .full, logger: logger
        )
        var options = Drain.Options()
        options.consumer = consumer
        options.batch = batch
        options.batchBytes = batchBytes
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
