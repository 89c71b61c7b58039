import Metrics
import ServiceLifecycle
public import SpoorCollectorCore
import Synchronization

/// The scale-out store: each batch frame is published, as it came, to a NATS JetStream stream, one message with
/// `Nats-Msg-Id` = batch id, and the request is answered once the stream acknowledged it.
///
/// The stream refuses a message id it holds within its duplicate window and says so in the acknowledgement, which
/// becomes `"duplicate": true`. Collectors keep nothing: any number of them publish to the same stream, and
/// `spoor-collector drain` moves the batches into SQL (``Drain``). What an acknowledgement survives depends on the
/// servers: nats-server 2.9 writes a replicated message to each replica's file store and syncs it to disk in the
/// background (every 60 s); the stream acknowledges once a majority of replicas hold it, so with replicas on
/// separate machines an acknowledged batch survives any one machine losing power (docs/collector.md).
///
/// The stream is created when missing on first use (a collector starts while the cluster is down and answers
/// 503 until it is back). ``run()`` closes the connection when the service group shuts down.
public final class JetStreamStore: BatchStore {
    /// The header that carries when the collector received a batch, epoch milliseconds.
    public static let receivedAtHeader = "Spoor-Received-At"

    public var keepsFrames: Bool { true }

    /// The connected server's largest message (nats-server's `max_payload`, 1 MiB unless configured), less room
    /// for the headers; 1 MiB's worth while not connected.
    public var maxFrameBytes: Int {
        let payload = client.maxPayload
        return (payload > 0 ? payload : 1 << 20) - 1024
    }

    private let client: NATSClient
    private let settings: StreamSettings
    private let timeout: Duration
    private let streamReady = Atomic<Bool>(false)
    private let stored = Counter(label: "spoor_collector_nats_acks_total", dimensions: [("duplicate", "false")])
    private let duplicates = Counter(label: "spoor_collector_nats_acks_total", dimensions: [("duplicate", "true")])
    private let failures = Counter(label: "spoor_collector_nats_publish_failures_total")
    private let ackTime = Metrics.Timer(label: "spoor_collector_nats_ack_seconds")

    /// Connects to `location` (in the background when no server answers yet); a publish that is not acknowledged
    /// within `timeout` fails as unavailable.
    public init(_ location: NATSLocation, settings: StreamSettings = .init(), timeout: Duration = .seconds(5)) throws(StoreUnavailable) {
        client = try NATSClient(location, name: "spoor-collector", requestTimeout: timeout)
        self.settings = settings
        self.timeout = timeout
    }

    public func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult {
        let start = ContinuousClock.now
        do {
            try await ensureStream()
            let ack = try await client.publish(
                subject: client.location.subject, messageID: batch.batchID,
                headers: [(Self.receivedAtHeader, String(batch.receivedAt))], data: batch.frame, timeout: timeout
            )
            ackTime.recordInterval(since: start)
            (ack.duplicate ? duplicates : stored).increment()
            return ack.duplicate ? .duplicate : .stored
        } catch {
            failures.increment()
            throw error
        }
    }

    /// Answers when the stream can be reached (a JetStream request to the cluster).
    public func ping() async throws(StoreUnavailable) {
        streamReady.store(false, ordering: .releasing)
        try await ensureStream()
    }

    /// Waits for the service group to shut down, then closes the connection (after the HTTP server has answered
    /// every request in flight).
    public func run() async {
        try? await gracefulShutdown()
        client.close()
    }

    private func ensureStream() async throws(StoreUnavailable) {
        guard !streamReady.load(ordering: .acquiring) else { return }
        try await client.ensureStream(settings)
        streamReady.store(true, ordering: .releasing)
    }
}
