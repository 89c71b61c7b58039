import Foundation
import GRDB
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorSystem
import SpoorWire

/// What a collector's SQLite store holds, read the way an analyst would.
struct StoreReading {
    let path: String

    /// How many rows each (anonymous id, sequence) pair has.
    func pairCounts() throws -> [Pair: Int] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            var counts: [Pair: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT anonymous_id, sequence, COUNT(*) AS n FROM events GROUP BY 1, 2") {
                counts[Pair(anonymousID: row["anonymous_id"], sequence: row["sequence"])] = row["n"]
            }
            return counts
        }
    }

    /// The stored batch ids.
    func batchIDs() throws -> [String] {
        try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT batch_id FROM batches ORDER BY batch_id") }
    }

    /// The number of event rows.
    func eventCount() throws -> Int {
        try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events") ?? 0 }
    }
}

/// An event's identity in the store: exactly-once is checked on these.
struct Pair: Hashable, CustomStringConvertible {
    var anonymousID: String
    var sequence: Int64
    var description: String { "(\(anonymousID), \(sequence))" }
}

/// One POST with the headers the uploader sends, the outcome kept whole: a test of faults looks at network errors.
enum Post {
    /// The status, headers and body, or the error the client saw.
    static func batch(_ body: [UInt8], to url: URL, batchID: BatchID? = nil, retry: Int? = nil,
                      timeout: TimeInterval = waitBound.timeInterval) async -> Result<(status: Int, headers: [String: String], body: String), any Error> {
        var headers = ["Content-Type": BatchFrame.mediaType]
        if let batchID { headers["Spoor-Batch-Id"] = "\(batchID)" }
        if let retry { headers["Spoor-Retry-Count"] = "\(retry)" }
        do {
            let answer = try await TestHTTP.send("POST", url, body: body, headers: headers, timeout: timeout)
            return .success((answer.status, answer.headers, answer.body))
        } catch {
            return .failure(error)
        }
    }
}
