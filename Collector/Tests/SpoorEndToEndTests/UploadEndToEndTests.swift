import Foundation
import GRDB
import SpoorCollectorTestSupport
import SpoorFaultProxy
import SpoorLoopback
import SpoorModel
import SpoorTracker
import Testing

/// What the collector's SQLite store holds, read with GRDB while (or after) the collector runs.
struct StoredEvents {
    /// (anonymous id, sequence, task, n) of every event row, ordered by sequence.
    var rows: [(anonymousID: String, sequence: Int64, task: Int, n: Int)]
    var batches: Int

    init(databasePath: String) throws {
        let queue = try DatabaseQueue(path: databasePath, configuration: { var c = GRDB.Configuration(); c.readonly = true; return c }())
        (rows, batches) = try queue.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT anonymous_id, sequence,
                       json_extract(properties, '$.task') AS task, json_extract(properties, '$.n') AS n
                FROM events ORDER BY sequence
                """).map { row in
                (anonymousID: row["anonymous_id"] as String, sequence: row["sequence"] as Int64,
                 task: (row["task"] as Int?) ?? -1, n: (row["n"] as Int?) ?? -1)
            }
            return (rows, try Int.fetchOne(db, sql: "SELECT count(*) FROM batches") ?? 0)
        }
    }

    /// Whether every (anonymous id, sequence) pair appears exactly once.
    var isExactlyOnce: Bool {
        Set(rows.map { "\($0.anonymousID)/\($0.sequence)" }).count == rows.count
    }
}

/// A fresh storage directory, removed at the end.
final class StorageDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-e2e-\(UUID().uuidString)")
    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct UploadEndToEndTests {
    @Test func fourTasksTrackingTenThousandEventsReachTheStoreExactlyOnceInOrder() async throws {
        let collector = try await CollectorProcess()
        let storage = StorageDirectory()
        var configuration = SpoorTracker.Configuration(storageDirectory: storage.url)
        configuration.upload.serverURL = collector.batchURL
        configuration.storage.durability = .none
        let tracker = try Tracker(configuration: configuration)

        let perTask = 2_500
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for n in 0..<perTask {
                        tracker.track("E2E", properties: ["task": .int(Int64(task)), "n": .int(Int64(n))])
                    }
                }
            }
        }
        let result = await tracker.flush(timeout: waitBound)
        #expect(result.isComplete, "\(result)")
        #expect(result.pendingEvents == 0)

        let stored = try StoredEvents(databasePath: collector.databasePath)
        #expect(stored.rows.count == 4 * perTask)
        #expect(stored.isExactlyOnce)
        // Each task's events, in sequence order, are its own n = 0, 1, 2, ...
        for task in 0..<4 {
            #expect(stored.rows.filter { $0.task == task }.map(\.n) == Array(0..<perTask), "task \(task)")
        }
        let counters = try #require(tracker.counters.upload)
        #expect(counters.deliveredEvents == 4 * perTask)
        #expect(counters.deliveredBatches == stored.batches)
        #expect(counters.retries == 0)
        #expect(counters.rejectedBatches == 0)
        #expect(await tracker.shutdown(timeout: waitBound))
    }

    /// The `KEY=VALUE` fields of a child's line, after its first word.
    static func fields(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for part in line.split(separator: " ").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, fields[String(pair[0])] == nil { fields[String(pair[0])] = String(pair[1]) }
        }
        return fields
    }

    @Test func offlineTheCapsHoldAndEverythingKeptArrivesWhenTheCollectorReturns() async throws {
        // The app is a child process of its own (SpoorUploadChild's offline mode), so its memory is its own and not
        // this test process's, where other suites allocate what they like. It uploads through a proxy, which stays
        // at one address: while "offline" every request is reset, as a network that is down would; once the
        // collector is up the proxy passes everything to it.
        let proxy = try FaultProxy(upstreamPort: nil, script: FaultScript(then: .resetMidBody))
        defer { proxy.stop() }
        let storage = StorageDirectory()
        let total = 50_000
        let child = try LineProcess(
            CollectorProcess.builtProduct("SpoorUploadChild", override: "SPOOR_UPLOAD_CHILD_BIN"),
            [storage.url.path, proxy.batchURL.absoluteString, "0", "offline", "\(total)"], input: true
        )
        let offline = Self.fields(try await child.line { $0.hasPrefix("offline ") }.line)
        let number = { (key: String) in Int(offline[key] ?? "") ?? -1 }
        // Nothing was delivered; what is kept is within the caps (the log's 10,000 events and the outbox's
        // 16 batches of 100), and every other event is counted as dropped.
        #expect(number("delivered") == 0)
        #expect(offline["reason"] == "backingOff", "\(offline)")
        let kept = number("pending")
        // The log is full (the newest 10,000), and the outbox holds at most 16 batches of 100 beside it.
        #expect(kept >= 10_000 && kept <= 10_000 + 16 * 100, "kept \(kept)")
        #expect(number("accepted") == total)
        #expect(number("dropped") == total - kept)
        #expect(number("retries") >= 1)
        #expect(offline["state"] == "backingOff")
        // 50,000 events went through; memory grew by far less than they would take if kept.
        #expect(number("rss-growth") < 48 << 20, "RSS grew by \(number("rss-growth") >> 20) MiB")

        // The collector comes up; the child's next flush cuts the backoff short and delivers everything kept.
        let collector = try await CollectorProcess()
        proxy.upstreamPort = collector.port
        proxy.setScript(.passThrough)
        child.closeInput()
        let online = Self.fields(try await child.line { $0.hasPrefix("online ") }.line)
        #expect(online["complete"] == "true", "\(online)")
        #expect(online["delivered"] == "\(kept)")
        #expect(try await child.exitStatus() == 0)

        let stored = try StoredEvents(databasePath: collector.databasePath)
        #expect(stored.rows.count == kept)
        #expect(stored.isExactlyOnce)
        #expect(stored.rows.allSatisfy { (0..<total).contains($0.n) })
        // Drop-oldest: the newest events are all there.
        #expect(stored.rows.last?.n == total - 1)
    }
}
