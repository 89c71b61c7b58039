import Foundation
import GRDB
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorModel
import SpoorWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("NATS JetStream: a real 3-node cluster, two collectors publishing, drains into SQLite", .timeLimit(.minutes(10)))
struct JetStreamTests {
    static let stream = "SPOOR"

    /// What became of one batch: how many times it was posted and the answer that took it.
    struct Delivery: Sendable {
        var index: Int
        var attempts: Int
        /// The 200 answer's body; nil while no attempt was accepted.
        var accepted: String?
        /// The collector that accepted it.
        var acceptedBy: Int?

        var isDuplicate: Bool { accepted?.hasSuffix(#""duplicate":true}"#) == true }
    }

    /// Posts `frame` once and notes the outcome: a 200 takes it; the stream being unavailable (503) or a network
    /// error leaves it to be sent again. Any other answer fails the test.
    static func attempt(_ delivery: inout Delivery, _ frame: [UInt8], to collectors: [CollectorProcess], _ which: Int) async {
        delivery.attempts += 1
        guard let answer = try? await collectors[which].request(body: frame) else { return }
        if answer.status == 200 {
            delivery.accepted = answer.body
            delivery.acceptedBy = which
        } else {
            #expect(answer.status == 503, "only the stream being unavailable may refuse a valid batch: \(answer.body)")
        }
    }

    /// Posts each of `frames` from four concurrent clients, alternating between the collectors, at most `attempts`
    /// times each, sent again at once when refused (each refusal took the collectors' store timeout, or a failed
    /// connection); returns what became of each.
    static func post(_ frames: [(index: Int, frame: [UInt8], delivery: Delivery)], to collectors: [CollectorProcess],
                     attempts: Int) async -> [Delivery] {
        await withTaskGroup(of: [Delivery].self) { group in
            for client in 0..<4 {
                group.addTask {
                    var done: [Delivery] = []
                    for (position, item) in frames.enumerated() where position % 4 == client {
                        var delivery = item.delivery
                        while delivery.accepted == nil, delivery.attempts < attempts {
                            await attempt(&delivery, item.frame, to: collectors, (item.index + delivery.attempts) % 2)
                        }
                        done.append(delivery)
                    }
                    return done
                }
            }
            return await group.reduce(into: []) { $0 += $1 }.sorted { $0.index < $1.index }
        }
    }

    /// A drain from the cluster's stream into `database`, redelivering what it does not acknowledge within 2 s.
    static func drain(_ cluster: NATSCluster, into database: String, exitWhenDrained: Bool) throws -> LineProcess {
        try LineProcess(try CollectorProcess.binary(), [
            "drain", "--from", cluster.url(stream: stream), "--store", "sqlite:\(database)", "--ack-wait", "2s", "--batch", "16",
        ] + (exitWhenDrained ? ["--exit-when-drained"] : []))
    }

    @Test("collectors publish, a stream leader and a drain are SIGKILLed mid-run and restarted: every accepted event in SQL exactly once")
    func clusterExactlyOnce() async throws {
        // Clients reach each node through a forwarder of its own, so the collectors' URL stays right when the
        // killed node comes back on ports of its own choosing.
        let cluster = try await NATSCluster(size: 3, restartable: true)
        let url = cluster.url(stream: Self.stream)
        var collectors: [CollectorProcess] = []
        for _ in 0..<2 { collectors.append(try await CollectorProcess(store: url, arguments: ["--store-timeout", "2"])) }
        let database = collectors[0].directory.appendingPathComponent("drained.sqlite").path
        let frames = try (0..<150).map { index in try Frames.frame(Frames.events(anonymousID: "install-\(index)", sequences: 0..<25)) }
        func batches(_ range: Range<Int>) -> [(index: Int, frame: [UInt8], delivery: Delivery)] {
            range.map { ($0, frames[$0], Delivery(index: $0, attempts: 0)) }
        }

        // A bad body keeps its 4xx and never reaches the stream; one past the servers' largest message (1 MiB) gets
        // 413, which a client splits, rather than 503 again and again.
        let refused = try await collectors[1].request(body: Array(frames[0].prefix(40)))
        #expect(refused.status == 400)
        var large = Frames.events(anonymousID: "large", sequences: 0..<3)
        for index in large.indices {
            for key in 0..<60 { large[index].properties["blob\(key)"] = .string(String(repeating: "x", count: 8000)) }
        }
        let tooLarge = try await collectors[0].request(body: try Frames.frame(large, codec: .none))
        #expect(tooLarge.status == 413, "\(tooLarge.body)")

        var drain = try Self.drain(cluster, into: database, exitWhenDrained: false)
        var deliveries = await Self.post(batches(0..<50), to: collectors, attempts: 50)
        let first = try await drain.line { $0.hasPrefix("drained ") }

        // The node leading the stream goes, then the drain, while batches keep coming: one attempt each now.
        let leader = try #require(cluster.streamLeader(Self.stream), "a node logged that it leads the stream")
        let marks = cluster.logMarks()
        try await cluster.kill(leader)
        async let during = Self.post(batches(50..<100), to: collectors, attempts: 1)
        _ = try await drain.line(from: first.index + 1) { $0.hasPrefix("drained ") }
        try await drain.stop(signal: SIGKILL)
        deliveries += await during

        // Once another node leads the stream, what was refused goes again, with the rest, and the node comes back.
        _ = try await cluster.newStreamLeader(Self.stream, after: marks)
        try await cluster.start(leader)
        let again = deliveries.filter { $0.accepted == nil }.map { ($0.index, frames[$0.index], $0) }
        deliveries = deliveries.filter { $0.accepted != nil }
        deliveries += await Self.post(again + batches(100..<150), to: collectors, attempts: 50)
        deliveries.sort { $0.index < $1.index }
        // The same batch again: the stream remembers its id.
        var repeated = Delivery(index: 7, attempts: 0)
        while repeated.accepted == nil, repeated.attempts < 50 { await Self.attempt(&repeated, frames[7], to: collectors, 1) }
        #expect(repeated.isDuplicate, "\(repeated)")
        // Each duplicate the second collector answered, and only those, is counted as the stream's duplicate flag.
        let flagged = (deliveries + [repeated]).filter { $0.acceptedBy == 1 && $0.isDuplicate }.count
        let metrics = try await collectors[1].request("GET", "/metrics").body
        #expect(metrics.contains("spoor_collector_nats_acks_total{duplicate=\"true\"} \(flagged)\n"), "\(flagged) duplicates: \(metrics)")
        #expect(metrics.contains("spoor_collector_nats_ack_seconds_count"))

        drain = try Self.drain(cluster, into: database, exitWhenDrained: true)
        #expect(try await drain.exitStatus() == 0)
        await cluster.stop()

        // Every batch accepted; one that was refused may have reached the stream all the same (its acknowledgement
        // lost with the leader), and then, only then, is a later answer a duplicate.
        #expect(deliveries.map(\.index) == Array(0..<150))
        #expect(deliveries.allSatisfy { $0.accepted != nil }, "\(deliveries.filter { $0.accepted == nil }.map(\.index))")
        let falseDuplicates = deliveries.filter { $0.attempts == 1 && $0.accepted?.hasSuffix(#""duplicate":false}"#) != true }
        #expect(falseDuplicates.isEmpty, "accepted at the first attempt, yet not as new: \(falseDuplicates)")
        print("jetstream: batches sent more than once \(deliveries.filter { $0.attempts > 1 }.count), "
              + "answered duplicate \(deliveries.filter(\.isDuplicate).count)")
        let stored = try await DatabaseQueue(path: database).read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM batches") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT DISTINCT batch_id, idx FROM events)") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(DISTINCT anonymous_id) FROM events") ?? -1)
        }
        #expect(stored.0 == 150)
        #expect(stored.1 == 150 * 25)
        #expect(stored.2 == 150 * 25)
        #expect(stored.3 == 150)
    }
}
