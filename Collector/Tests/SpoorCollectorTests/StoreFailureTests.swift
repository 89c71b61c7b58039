import SpoorCollectorTestSupport
import Foundation
import GRDB
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorModel
import Testing

/// Another process's write lock on a collector's SQLite file, held by a thread until released.
final class SQLiteWriteLock: Sendable {
    private let locked = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        let thread = Thread { [locked, release, finished] in
            try? queue.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.signal()
                release.wait()
                try db.execute(sql: "ROLLBACK")
            }
            finished.signal()
        }
        thread.start()
        guard locked.wait(timeout: .now() + 30) == .success else { throw CollectorTestError("could not lock \(path)") }
    }

    func unlock() {
        release.signal()
        finished.wait()
    }
}

@Suite("The store down or slow, and SIGTERM with requests in flight, on real collector processes")
struct StoreFailureTests {
    @Test("SQLite locked by another writer: 503 with Retry-After, then 200 once the lock is gone")
    func sqliteLocked() async throws {
        let collector = try CollectorProcess(arguments: ["--store-timeout", "0.3"])
        let frame = try Frames.frame(Frames.events(5))
        let lock = try SQLiteWriteLock(path: collector.databasePath)
        let refused = try await collector.request(body: frame)
        lock.unlock()
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        // The client learns the kind of failure, not the store's own message (that goes to the server's log).
        #expect(refused.body == #"{"error":"store_unavailable","detail":"the store is not answering; retry later"}"#)
        let retried = try await collector.request(body: frame)
        #expect(retried.status == 200)
        #expect(retried.body.hasSuffix(#""duplicate":false}"#))
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 5)
    }

    @Test("SIGTERM with batches in flight: each finishes with 200 and is stored whole")
    func sigtermWithRequestsInFlight() async throws {
        let collector = try CollectorProcess(arguments: ["--store-timeout", "30"])
        let frames = try (0..<4).map { _ in try Frames.frame(Frames.events(200)) }
        // The store is held so that every batch is still in flight when the signal arrives.
        let lock = try SQLiteWriteLock(path: collector.databasePath)
        let requests = frames.map { frame in Task { try await collector.request(body: frame) } }
        let inFlight = ["spoor_collector_batches_in_flight 4.0\n", "spoor_collector_bytes_in_total \(frames.map(\.count).reduce(0, +))\n"]
        let deadline = Date().addingTimeInterval(30)
        while case let metrics = try await collector.request("GET", "/metrics").body, !inFlight.allSatisfy(metrics.contains) {
            guard Date() < deadline else {
                lock.unlock()
                throw CollectorTestError("the batches never were in flight: \(metrics)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(collector.process.processIdentifier, SIGTERM)
        lock.unlock()
        for request in requests {
            let answer = try await request.value
            #expect(answer.status == 200)
            #expect(answer.body.hasSuffix(#""events":200,"duplicate":false}"#))
        }
        #expect(try await collector.waitForExit() == 0)
        let database = try DatabaseQueue(path: collector.databasePath)
        let (batches, events, partial) = try await database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM batches"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM events"),
             try Int.fetchOne(db, sql: """
                SELECT count(*) FROM batches b
                WHERE event_count != (SELECT count(*) FROM events e WHERE e.batch_id = b.batch_id)
                """))
        }
        #expect(batches == 4)
        #expect(events == 800)
        #expect(partial == 0)
    }
}
