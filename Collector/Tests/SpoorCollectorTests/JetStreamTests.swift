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

@Suite("NATS JetStream: a real 3-node cluster, two collectors publishing, drains into SQLite")
struct JetStreamTests {
    static let stream = "SPOOR"

    /// Posts `frame` until the collector answers 200 (503 and network errors are retried, as the tracker's uploader
    /// does, a tenth of a second apart), and returns the answer's body; fails past `deadline`.
    static func postUntilAccepted(_ frame: [UInt8], to collector: CollectorProcess, deadline: ContinuousClock.Instant) async throws -> String {
        while true {
            if let answer = try? await collector.request(body: frame) {
                if answer.status == 200 { return answer.body }
                #expect(answer.status == 503, "only the stream being unavailable may refuse a valid batch: \(answer.body)")
            }
            guard ContinuousClock.now < deadline else { throw CollectorTestError("a batch was not accepted in time") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Posts `frames` from four concurrent clients, alternating between the collectors; returns each answer's body.
    static func post(_ frames: ArraySlice<[UInt8]>, to collectors: [CollectorProcess]) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(60)
        return try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<4 {
                group.addTask {
                    var answers: [String] = []
                    for index in frames.indices where index % 4 == client {
                        answers.append(try await postUntilAccepted(frames[index], to: collectors[index % 2], deadline: deadline))
                    }
                    return answers
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
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
        let cluster = try NATSCluster(size: 3)
        let url = cluster.url(stream: Self.stream)
        let collectors = try (0..<2).map { _ in try CollectorProcess(store: url, arguments: ["--store-timeout", "2"]) }
        let database = collectors[0].directory.appendingPathComponent("drained.sqlite").path
        let frames = try (0..<150).map { index in try Frames.frame(Frames.events(anonymousID: "install-\(index)", sequences: 0..<25)) }

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
        var answers = try await Self.post(frames[0..<50], to: collectors)
        let first = try await drain.line(timeout: .seconds(30)) { $0.hasPrefix("drained ") }

        // The node leading the stream goes, then the drain, while batches keep coming.
        let leader = try #require(cluster.streamLeader(Self.stream), "a node logged that it leads the stream")
        cluster.kill(leader)
        async let during = Self.post(frames[50..<100], to: collectors)
        _ = try await drain.line(from: first.index + 1, timeout: .seconds(30)) { $0.hasPrefix("drained ") }
        drain.stop(signal: SIGKILL)
        answers += try await during

        try cluster.start(leader)
        answers += try await Self.post(frames[100...], to: collectors)
        // The same batch again: the stream remembers its id.
        let again = try await Self.postUntilAccepted(frames[7], to: collectors[1], deadline: .now + .seconds(30))
        #expect(again.hasSuffix(#""duplicate":true}"#))
        let metrics = try await collectors[1].request("GET", "/metrics").body
        #expect(metrics.contains(#"spoor_collector_nats_acks_total{duplicate="true"} 1"#), "the stream's duplicate flag is counted")
        #expect(metrics.contains("spoor_collector_nats_ack_seconds_count"))

        drain = try Self.drain(cluster, into: database, exitWhenDrained: true)
        #expect(try await drain.exitStatus(timeout: .seconds(60)) == 0)

        #expect(answers.count == 150)
        #expect(answers.filter { $0.hasSuffix(#""duplicate":false}"#) }.count == 150, "each batch accepted once as new")
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
