import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import Metrics
import NIOSSL
import Prometheus
import ServiceLifecycle
import SpoorCollectorCore
import SpoorCollectorNATS
import SpoorCollectorPostgres
import SpoorCollectorSQLite

/// `spoor-collector serve`: the HTTP server and its store, as services of one group.
///
/// SIGTERM or SIGINT shuts the group down gracefully, in the reverse order of the services: the HTTP server stops
/// accepting and finishes the requests in flight (each batch committed whole or not at all), then the store closes.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Runs the collector.")

    @Option(help: "Address to listen on, HOST:PORT (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    @Option(help: "The store: sqlite:PATH, postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=…] or nats://HOST:PORT[,HOST:PORT…]/STREAM (default: $SPOOR_STORE, else sqlite:spoor-events.sqlite).")
    var store: String?

    @Option(name: .customLong("store-timeout"), help: "Seconds a store operation may wait (a lock, a down server) before the answer is 503.")
    var storeTimeout = 5.0

    @Option(name: .customLong("max-connections"), help: "PostgreSQL: connections in the pool.")
    var maxConnections = 8

    @Option(name: .customLong("token"), help: "An ingest token: clients must send it to POST batches; repeat for several (also --token-file, $SPOOR_TOKEN).")
    var tokens: [String] = []

    @Option(name: .customLong("token-file"), help: "A file of ingest tokens, one a line.")
    var tokenFiles: [String] = []

    @Option(name: .customLong("admin-token"), help: "An admin token: reads the live events API and /metrics (also --admin-token-file, $SPOOR_ADMIN_TOKEN). Without one, those answer on loopback only.")
    var adminTokens: [String] = []

    @Option(name: .customLong("admin-token-file"), help: "A file of admin tokens, one a line.")
    var adminTokenFiles: [String] = []

    @Flag(help: "Serve a non-loopback address without an ingest token: anyone who reaches it may store events.")
    var insecure = false

    @Option(name: .customLong("nats-ca"), help: "NATS: the certificate authorities of the servers' certificates, PEM (with tls://).")
    var natsCA: String?

    @Option(name: .customLong("nats-creds"), help: "NATS: a credentials file (user JWT and NKey seed).")
    var natsCredentials: String?

    @Option(name: .customLong("tls-cert"), help: "HTTPS: the server's certificate chain, PEM (with --tls-key).")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "HTTPS: the server's private key, PEM.")
    var tlsKey: String?

    @Option(name: .customLong("max-body"), help: "Largest request body in bytes.")
    var maxBody = 4 << 20

    @Option(name: .customLong("max-decompressed"), help: "Largest decompressed payload in bytes (at most 128 MiB).")
    var maxDecompressed = 4 << 20

    @Option(name: .customLong("max-row-bytes"), help: "Most bytes of row text one batch may become.")
    var maxRowBytes = 16 << 20

    @Option(name: .customLong("max-in-flight"), help: "Batches handled at once before answering 503.")
    var maxInFlight = 64

    @Option(name: .customLong("max-in-flight-bytes"), help: "Bytes all requests may hold at once (bodies arriving, batches being handled) before answering 503.")
    var maxInFlightBytes = 256 << 20

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may send nothing (headers included, or between requests) before it is closed.")
    var idleTimeout = 30.0

    @Option(name: .customLong("body-timeout"), help: "Seconds any body gets to arrive, on top of its length at --min-body-rate.")
    var bodyTimeout = 10.0

    @Option(name: .customLong("min-body-rate"), help: "The slowest a body may arrive, in bytes a second.")
    var minBodyRate = 4096

    @Option(name: .customLong("group-events"), help: "SQL stores: the most events one group commit holds.")
    var groupEvents = 20_000

    @Option(name: .customLong("group-wait"), help: "SQL stores: milliseconds a group waits for more batches before it commits (0: at once).")
    var groupWait = 0.0

    @Option(name: .customLong("writers"), help: "PostgreSQL: groups written at once, each on its own connection (SQLite has one writer).")
    var writers = 1

    @Option(name: .customLong("sqlite-sync"), help: "SQLite: normal (a 200 survives the process being killed; commits are synced at checkpoints) or full (every commit synced: a 200 survives a power cut).")
    var sqliteSync = "normal"

    @Option(help: "NATS: replicas of the stream when the collector creates it.")
    var replicas = 3

    @Option(name: .customLong("duplicate-window"), help: "NATS: how long the stream refuses a batch id it holds (24h, 90m, …).")
    var duplicateWindow = "24h"

    @Option(name: .customLong("max-age"), help: "NATS: how long the stream keeps a batch, drained or not (7d is 168h).")
    var maxAge = "168h"

    @Option(help: "Also write every newly stored event as a JSON line to FILE, or - for standard output.")
    var ndjson: String?

    @Option(name: .customLong("live-events"), help: "Newest events kept in memory for the live events page (GET /).")
    var liveEvents = 1000

    @Option(name: .customLong("log-level"), help: "What goes to standard error: error, warning, info, or debug (also each batch once its body is read).")
    var logLevel = "info"

    func run() async throws {
        let address = try ListenAddress(parsing: listen)
        let location = try StoreLocation(parsing: store ?? ProcessInfo.processInfo.environment["SPOOR_STORE"] ?? "sqlite:spoor-events.sqlite")
            .withNATS(certificateAuthorities: natsCA, credentialsFile: natsCredentials)
        var logger = Logger(label: "spoor-collector")
        guard let level = Logger.Level(rawValue: logLevel), [.error, .warning, .info, .debug].contains(level) else {
            throw ValidationError("--log-level must be error, warning, info or debug")
        }
        logger.logLevel = level
        let credentials = try Credentials(
            ingest: Credentials.load(tokens, files: tokenFiles, variable: "SPOOR_TOKEN", option: "--token"),
            admin: Credentials.load(adminTokens, files: adminTokenFiles, variable: "SPOOR_ADMIN_TOKEN", option: "--admin-token")
        )
        // Secure by default: an address others can reach takes batches only from holders of a token.
        guard isLoopback(host: address.host) || credentials.policy.ingestTokens || insecure else {
            throw ValidationError("""
                --listen \(address.host) is not a loopback address and no ingest token is set, so anyone who reaches it \
                could store events: set --token, --token-file or SPOOR_TOKEN, or pass --insecure to serve it open
                """)
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        guard storeTimeout > 0, maxConnections > 0, (1...1_000_000).contains(groupEvents), groupWait >= 0,
              (1...maxConnections).contains(writers) else {
            throw ValidationError("""
                --store-timeout and --max-connections must be positive, --group-events from 1 to 1000000, \
                --group-wait not negative, --writers between 1 and --max-connections
                """)
        }
        guard (1...(256 << 20)).contains(maxBody), (1...IngestLimits.maxDecompressedLimit).contains(maxDecompressed), maxInFlight >= 0,
              (1...EventRows.maxTextBytes).contains(maxRowBytes), maxInFlightBytes >= maxBody,
              (0.001...86_400).contains(idleTimeout), (0.001...86_400).contains(bodyTimeout), minBodyRate > 0 else {
            throw ValidationError("""
                --max-body must be from 1 to 256 MiB, --idle-timeout and --body-timeout from 1 ms to a day, --min-body-rate positive, \
                --max-in-flight not negative, \
                --max-decompressed at most \(IngestLimits.maxDecompressedLimit), --max-row-bytes at most \(EventRows.maxTextBytes), \
                --max-in-flight-bytes at least --max-body
                """)
        }
        guard (1...10_000).contains(liveEvents) else { throw ValidationError("--live-events must be from 1 to 10000") }
        let live = LiveFeed(capacity: liveEvents)
        guard let sync = SQLiteStore.Sync(rawValue: sqliteSync) else { throw ValidationError("--sqlite-sync must be full or normal") }
        guard [1, 3, 5].contains(replicas) else { throw ValidationError("--replicas must be 1, 3 or 5") }
        let stream = StreamSettings(
            replicas: replicas, duplicateWindow: try parseDuration(duplicateWindow, option: "--duplicate-window"),
            maxAge: try parseDuration(maxAge, option: "--max-age")
        )
        let store = try location.open(
            timeout: .milliseconds(Int64(storeTimeout * 1000)), maxConnections: maxConnections,
            group: GroupCommit.Limits(
                maxEvents: groupEvents, maxWait: .microseconds(Int64(groupWait * 1000)),
                writers: location.isPostgres ? writers : 1
            ),
            sqliteSync: sync, stream: stream, logger: logger
        )
        let sink = try ndjson.map(NDJSONSink.init(path:))
        let handler = BatchHandler(
            ingest: Ingest(limits: IngestLimits(maxBody: maxBody, maxDecompressed: maxDecompressed, maxRowBytes: maxRowBytes),
                           store: store, keepsEvents: sink != nil, keepsRows: true),
            credentials: credentials, admission: Admission(maxRequests: maxInFlight, maxBytes: maxInFlightBytes),
            bodyDeadline: BodyDeadline(grace: .milliseconds(Int64(bodyTimeout * 1000)), minimumRate: minBodyRate),
            sink: sink, live: live, logger: logger
        )
        let health = HealthCheck(store: store, logger: logger)
        let router = Router(context: CollectorContext.self)
        router.add(middleware: CommonHeadersMiddleware())
        router.add(middleware: JSONErrorMiddleware())
        router.post("/v1/batch") { request, context in await handler.handle(request, context: context) }
        for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
            router.on("/v1/batch", method: method) { _, _ in
                jsonResponse(.error(405, "method_not_allowed", "use POST /v1/batch"), headers: [.allow: "POST"])
            }
        }
        // Open to anyone (load balancers): a cached yes or no, nothing about the store.
        router.get("/healthz") { _, _ in
            if await health.isHealthy() { return jsonResponse(IngestResponse(status: 200, body: #"{"status":"ok"}"#)) }
            return jsonResponse(.error(503, "store_unavailable", "the store is not answering", retryAfter: 1))
        }
        LivePage(feed: live, credentials: credentials, metricsText: { registry.emitToString() }).register(on: router)
        router.get("/metrics") { request, context in
            let caller = credentials.caller(token: RequestHeaders.bearerToken(request.headers[.authorization]))
            if let refusal = credentials.policy.refusal(.read, caller: caller, fromLoopback: context.isFromLoopback) {
                logAnswer(refusal, context: context)
                return jsonResponse(refusal)
            }
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        // Heads are bounded (the request line counts against the list), and a connection that sends nothing for
        // --idle-timeout (a head never finished, a keep-alive left open) is closed.
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: 16 << 10, maxHeaderListSize: 32 << 10, maxHeaderFieldCount: 64
        )
        let http1 = HTTP1Channel.Configuration(
            idleTimeout: .milliseconds(Int64(idleTimeout * 1000)), httpDecoderConfiguration: decoder
        )
        let server: HTTPServerBuilder
        switch (tlsCertificate, tlsKey) {
        case (let certificate?, let key?):
            server = try .tls(.http1(configuration: http1), tlsConfiguration: Self.tlsConfiguration(certificate: certificate, key: key))
        case (nil, nil):
            server = .http1(configuration: http1)
        default:
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        let app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                // One line, written at once, so scripts can wait for it.
                FileHandle.standardOutput.write(Data("listening on \(address.host):\(port)\n".utf8))
            },
            logger: logger
        )
        // The group shuts services down last first: the server, finishing its requests, before the store they write to.
        let services = ServiceGroup(
            services: [store, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )
        try await services.run()
        logger.info("stopped")
    }

    /// The server's TLS: the certificate chain and key from PEM files, TLS 1.2 at least.
    static func tlsConfiguration(certificate: String, key: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        let privateKey: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw ValidationError("--tls-cert \(certificate) and --tls-key \(key) must be a PEM certificate chain and its private key: \(error)")
        }
        guard !chain.isEmpty else { throw ValidationError("--tls-cert \(certificate) holds no certificate") }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey)
        )
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}

