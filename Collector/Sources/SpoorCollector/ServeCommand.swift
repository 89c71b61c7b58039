import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
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

    @Option(help: "The store: sqlite:PATH, postgres://USER[:PASSWORD]@HOST:PORT/DB or nats://HOST:PORT[,HOST:PORT…]/STREAM.")
    var store = "sqlite:spoor-events.sqlite"

    @Option(name: .customLong("store-timeout"), help: "Seconds a store operation may wait (a lock, a down server) before the answer is 503.")
    var storeTimeout = 5.0

    @Option(name: .customLong("max-connections"), help: "PostgreSQL: connections in the pool.")
    var maxConnections = 8

    @Option(name: .customLong("token"), help: "A bearer token clients must send; repeat for several. None: no check.")
    var tokens: [String] = []

    @Option(name: .customLong("max-body"), help: "Largest request body in bytes.")
    var maxBody = 4 << 20

    @Option(name: .customLong("max-decompressed"), help: "Largest decompressed payload in bytes.")
    var maxDecompressed = 64 << 20

    @Option(name: .customLong("max-in-flight"), help: "Batches handled at once before answering 503.")
    var maxInFlight = 64

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
        let location = try StoreLocation(parsing: store)
        var logger = Logger(label: "spoor-collector")
        guard let level = Logger.Level(rawValue: logLevel), [.error, .warning, .info, .debug].contains(level) else {
            throw ValidationError("--log-level must be error, warning, info or debug")
        }
        logger.logLevel = level
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        guard storeTimeout > 0, maxConnections > 0, groupEvents > 0, groupWait >= 0, (1...maxConnections).contains(writers) else {
            throw ValidationError("""
                --store-timeout, --max-connections and --group-events must be positive, --group-wait not negative, \
                --writers between 1 and --max-connections
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
            ingest: Ingest(limits: IngestLimits(maxBody: maxBody, maxDecompressed: maxDecompressed), store: store,
                           keepsEvents: sink != nil, keepsRows: true),
            tokens: Set(tokens), maxInFlight: maxInFlight, sink: sink, live: live, logger: logger
        )
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: JSONErrorMiddleware())
        router.post("/v1/batch") { request, _ in await handler.handle(request) }
        for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
            router.on("/v1/batch", method: method) { _, _ in
                jsonResponse(.error(405, "method_not_allowed", "use POST /v1/batch"), headers: [.allow: "POST"])
            }
        }
        router.get("/healthz") { _, _ in
            do {
                try await store.ping()
                return jsonResponse(IngestResponse(status: 200, body: #"{"status":"ok"}"#))
            } catch {
                return jsonResponse(.error(503, "store_unavailable", "\(error)", retryAfter: 1))
            }
        }
        LivePage(feed: live, tokens: Set(tokens), metricsText: { registry.emitToString() }).register(on: router)
        router.get("/metrics") { _, _ in
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        let app = Application(
            router: router,
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
}

/// Turns router errors (unknown path, body limits) into the JSON error form.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let reason = error.status == .notFound ? "not_found" : error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "_")
            let detail = error.body ?? "\(request.method) \(request.uri.path)"
            return jsonResponse(.error(Int(error.status.code), reason, detail))
        }
    }
}

/// An HTTP response for an answer of the request core.
func jsonResponse(_ answer: IngestResponse, headers extra: HTTPFields = [:]) -> Response {
    var headers: HTTPFields = [.contentType: "application/json"]
    headers.append(contentsOf: extra)
    if let seconds = answer.retryAfter { headers[.retryAfter] = String(seconds) }
    return Response(status: .init(code: answer.status), headers: headers,
                    body: .init(byteBuffer: ByteBuffer(string: answer.body)))
}
