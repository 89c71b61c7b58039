public import Logging
import Metrics
public import ServiceLifecycle
public import SpoorCollectorCore

/// Moves batches from a JetStream stream into a SQL store: `spoor-collector drain`.
///
/// It fetches messages through a durable pull consumer, decodes each frame into rows as the collector does,
/// commits the fetched batches in one transaction, and acknowledges each message only after that commit. A drain
/// killed at any point leaves its unacknowledged messages to be redelivered (after the consumer's ack wait), and
/// the store's primary key on batch id answers a batch committed before the kill as a duplicate: nothing is lost
/// or stored twice. Drains sharing a consumer name share the work.
public final class Drain: Service {
    /// How a drain fetches and when it stops.
    public struct Options: Sendable {
        /// The durable consumer's name; drains with the same name share its messages.
        public var consumer = "spoor-drain"
        /// The most messages (batches) fetched, and committed, at once.
        public var batch = 256
        /// The most bytes fetched at once (the server stops a fetch at whichever of this and ``batch`` comes first);
        /// at least the servers' largest message, or a larger one could never be fetched.
        public var batchBytes = 64 << 20
        /// How long the stream waits for an acknowledgement before it delivers a message again.
        public var ackWait: Duration = .seconds(30)
        /// Stop once the consumer has nothing pending and nothing unacknowledged, instead of waiting for more.
        public var exitWhenDrained = false

        /// Creates options with the defaults.
        public init() {}
    }

    private let location: NATSLocation
    private let store: any GroupStore
    private let options: Options
    private let ingest: Ingest
    private let logger: Logger
    private let progress: @Sendable (String) -> Void
    private let deadLetters = Counter(label: "spoor_collector_drain_dead_letters_total")

    /// A drain from `location`'s stream into `store`; each committed group is reported to `progress` as one line,
    /// `drained BATCHES batches, EVENTS events, STORED new`, with running totals.
    public init(
        from location: NATSLocation, into store: any GroupStore, options: Options = .init(), limits: IngestLimits = .init(),
        logger: Logger, progress: @escaping @Sendable (String) -> Void
    ) {
        self.location = location
        self.store = store
        self.options = options
        ingest = Ingest(limits: limits, store: store)
        self.logger = logger
        self.progress = progress
    }

    /// Drains until the service group shuts down (the group committed last is acknowledged first), or, with
    /// ``Options/exitWhenDrained``, until the stream holds nothing more for the consumer.
    public func run() async throws {
        let client = try NATSClient(location, name: "spoor-drain", requestTimeout: .seconds(5))
        defer { client.close() }
        let subscription = try await retrying("subscribing") { () async throws(StoreUnavailable) in
            try await client.pullSubscription(durable: options.consumer, ackWait: options.ackWait)
        }
        progress("draining \(location.stream) as \(options.consumer)")
        var batches = 0, events = 0, stored = 0, dead = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let messages: [FetchedMessage]
            do {
                messages = try await subscription.fetch(options.batch, maxBytes: options.batchBytes, wait: .milliseconds(500))
            } catch {
                logger.warning("fetch failed, retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(250))
                continue
            }
            if messages.isEmpty {
                if options.exitWhenDrained {
                    do {
                        let backlog = try await subscription.backlog()
                        if backlog.pending == 0, backlog.unacknowledged == 0 { break }
                    } catch {
                        logger.warning("reading the consumer's backlog failed", metadata: ["error": "\(error)"])
                    }
                }
                continue
            }
            var records: [BatchRecord] = []
            var holders: [FetchedMessage] = []
            for message in messages {
                switch ingest.decode(message.data, receivedAt: message.receivedAt ?? 0) {
                case .success((let record, _)):
                    records.append(record)
                    holders.append(message)
                case .failure(let answer):
                    // Collectors publish only what they decode; what this drain cannot (a newer frame version, a
                    // larger --max-decompressed) is kept on the dead-letter subject, never dropped. A message whose
                    // copy is not acknowledged stays unacknowledged here and comes back after the ack wait.
                    do {
                        _ = try await client.publish(
                            subject: location.deadLetterSubject, messageID: "dead-\(UInt64.random(in: .min ... .max))",
                            headers: [("Spoor-Dead-Letter-Reason", String(answer.body.prefix(512))),
                                      (JetStreamStore.receivedAtHeader, String(message.receivedAt ?? 0))],
                            data: message.data, timeout: .seconds(5)
                        )
                        subscription.settle(message, .ack)
                        dead += 1
                        deadLetters.increment()
                        logger.error("a message is not a batch this drain decodes; moved to the dead-letter subject",
                                     metadata: ["answer": "\(answer.body.prefix(512))", "subject": "\(location.deadLetterSubject)"])
                    } catch {
                        logger.error("a message could not be moved to the dead-letter subject; it will come again",
                                     metadata: ["error": "\(error)"])
                    }
                }
            }
            let group = BatchGroup(records)
            // Committed before any acknowledgement; retried in place until the store takes it.
            let results = try await retrying("committing") { () async throws(StoreUnavailable) in
                try await store.insertGroup(group.distinct)
            }
            for message in holders { subscription.settle(message, .ack) }
            batches += records.count
            events += records.reduce(0) { $0 + $1.eventCount }
            stored += zip(group.distinct, results).filter { $1 == .stored }.reduce(0) { $0 + $1.0.eventCount }
            progress("drained \(batches) batches, \(events) events, \(stored) new, \(dead) dead-lettered")
        }
    }

    /// `work` until it succeeds, a quarter second apart; throws when the drain is cancelled or shutting down (what
    /// it held is then delivered again later).
    private func retrying<Value: Sendable>(
        _ what: String, _ work: () async throws(StoreUnavailable) -> Value
    ) async throws -> Value {
        while true {
            do {
                return try await work()
            } catch {
                guard !Task.isShuttingDownGracefully else { throw error }
                logger.warning("\(what) failed, retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }
}
