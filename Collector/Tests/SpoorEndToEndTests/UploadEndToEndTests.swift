import Foundation
import GRDB
import SpoorCollectorTestSupport
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

/// The resident set size of this process, in bytes (Linux `/proc/self/status`), or nil elsewhere.
func residentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        return digits.map { $0 * 1024 }
    }
    return nil
}

/// A fresh storage directory, removed at the end.
final class StorageDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-e2e-\(UUID().uuidString)")
    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite(.serialized) struct UploadEndToEndTests {
    @Test func fourTasksTrackingTenThousandEventsReachTheStoreExactlyOnceInOrder() async throws {
        let collector = try CollectorProcess()
        let storage = StorageDirectory()
        var configuration = SpoorTracker.Configuration(storageDirectory: storage.url)
        configuration.serverURL = collector.batchURL
        configuration.durability = .none
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
        let result = await tracker.flush()
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
        #expect(await tracker.shutdown())
    }

    @Test func offlineTheCapsHoldAndEverythingKeptArrivesWhenTheCollectorReturns() async throws {
        // Learn a free port from a first collector, then take it down: uploads now meet a closed port.
        let first = try CollectorProcess()
        let port = first.port
        let collectorDirectory = first.directory.deletingLastPathComponent().appendingPathComponent("spoor-e2e-store-\(UUID().uuidString)")
        first.stop()

        let storage = StorageDirectory()
        var configuration = SpoorTracker.Configuration(storageDirectory: storage.url)
        configuration.serverURL = URL(string: "http://127.0.0.1:\(port)/v1/batch")!
        configuration.durability = .none
        configuration.maxQueuedEvents = 10_000
        let tracker = try Tracker(configuration: configuration)

        let before = residentBytes()
        let total = 50_000
        for n in 0..<total {
            tracker.track("Offline", properties: ["task": 0, "n": .int(Int64(n))])
        }
        let offline = await tracker.flush()
        let after = residentBytes()
        // Nothing was delivered; what is kept is within the caps (the log's 10,000 events and the outbox's
        // 16 batches of 100), and every other event is counted as dropped.
        #expect(offline.deliveredEvents == 0)
        guard case .backingOff = offline.pendingReason else {
            Issue.record("expected a backoff, got \(String(describing: offline.pendingReason))")
            return
        }
        let kept = offline.pendingEvents
        #expect(kept > 0)
        #expect(kept <= 10_000 + 16 * 100)
        let counters = tracker.counters
        #expect(counters.accepted == total)
        #expect(counters.droppedByLog == total - kept)
        #expect(counters.upload?.retries ?? 0 >= 1)
        #expect(counters.upload?.state == .backingOff)
        if let before, let after {
            // 50,000 events went through; memory grew by far less than they would take if kept.
            #expect(after - before < 48 << 20, "RSS grew by \((after - before) >> 20) MiB")
        }

        // The collector comes back on the same port; a flush cuts the backoff short and delivers everything kept.
        let collector = try CollectorProcess(listen: "127.0.0.1:\(port)", directory: collectorDirectory)
        defer { try? FileManager.default.removeItem(at: collectorDirectory) }
        #expect(collector.port == port)
        let online = await tracker.flush()
        #expect(online.isComplete, "\(online)")
        #expect(online.deliveredEvents == kept)

        let stored = try StoredEvents(databasePath: collector.databasePath)
        #expect(stored.rows.count == kept)
        #expect(stored.isExactlyOnce)
        #expect(stored.rows.allSatisfy { (0..<total).contains($0.n) })
        // Drop-oldest: the newest events are all there.
        #expect(stored.rows.last?.n == total - 1)
        #expect(await tracker.shutdown())
    }
}
