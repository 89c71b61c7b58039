import SpoorCollectorTestSupport
import SpoorLoopback
import Foundation
import GRDB
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorModel
import SpoorSystem
import Testing

/// A write lock on a collector's SQLite file, as another process would hold it, by a thread of its own until
/// released (or, should a test never release it, until the wait bound). Taking and releasing it are awaited, and
/// hold no thread of the cooperative pool.
final class SQLiteWriteLock: Sendable {
    private let release = Promise<Void>()
    private let finished = Promise<Void>()

    private init() {}

    /// Takes the lock (`BEGIN IMMEDIATE`) on a thread that holds it until ``unlock()``.
    static func lock(path: String) async throws -> SQLiteWriteLock {
        let lock = SQLiteWriteLock()
        let queue = try DatabaseQueue(path: path)
        // True once the lock is held; false if taking it failed.
        let locked = Promise<Bool>()
        let thread = Thread { [release = lock.release, finished = lock.finished] in
            try? queue.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.fulfil(true)
                _ = release.wait(timeout: waitBound)
                try db.execute(sql: "ROLLBACK")
            }
            locked.fulfil(false)
            finished.fulfil(())
        }
        thread.start()
        guard await locked.value(orAfter: waitBound, false) else {
            throw CollectorTestError("could not lock \(path)")
        }
        return lock
    }

    /// Releases the lock and waits until the thread has rolled back.
    func unlock() async {
        release.fulfil(())
        await finished.value
    }
}

@Suite("The store down or slow, and SIGTERM with requests in flight, on real collector processes", .timeLimit(.minutes(10)))
struct StoreFailureTests {
    @Test("SQLite locked by another writer: 503 with Retry-After, then 200 once the lock is gone")
    func sqliteLocked() async throws {
        let collector = try await CollectorProcess(arguments: ["--store-timeout", "0.3"])
        let frame = try Frames.frame(Frames.events(5))
        let lock = try await SQLiteWriteLock.lock(path: collector.databasePath)
        let refused = try await collector.request(body: frame)
        await lock.unlock()
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        // The client learns the kind of failure, not the store's own message (that goes to the server's log).
        #expect(refused.body == #"{"error":"store_unavailable","detail":"the store is not answering; retry later"}"#)
        // A loaded machine may make the first commit after the lock slower than 0.3 s; only then is a duplicate fair.
        let retried = try await TestHTTP.untilStored { try await collector.request(body: frame) }
        #expect(retried.answer.status == 200)
        #expect(retried.sent > 1 || retried.answer.body.hasSuffix(#""duplicate":false}"#), "\(retried.answer.body)")
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 5)
    }

    @Test("SIGTERM with batches in flight: each finishes with 200 and is stored whole")
    func sigtermWithRequestsInFlight() async throws {
        // The store waits minutes for the lock: the batches are in flight until it is released.
        let collector = try await CollectorProcess(arguments: ["--log-level", "debug"])
        let frames = try (0..<4).map { _ in try Frames.frame(Frames.events(200)) }
        // The store is held so that every batch is still in flight when the signal arrives.
        let lock = try await SQLiteWriteLock.lock(path: collector.databasePath)
        let requests = frames.map { frame in Task { try await collector.request(body: frame) } }
        // The collector says so for each batch whose body it has read: four such lines, and all four are in flight.
        var next = 0
        do {
            for _ in frames {
                next = try await collector.process.line(.errors, from: next) { $0.contains("batch received") }.index + 1
            }
        } catch {
            await lock.unlock()
            throw error
        }
        let metrics = try await collector.request("GET", "/metrics").body
        #expect(metrics.contains("spoor_collector_batches_in_flight 4.0\n"), "\(metrics)")
        collector.signal(SIGTERM)
        await lock.unlock()
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
