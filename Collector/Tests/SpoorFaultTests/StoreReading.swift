import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import SpoorModel
import SpoorWire
import SpoorLog

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

/// Frames of test events for one anonymous id.
enum TestFrames {
    static func frame(anonymousID: String, sequences: Range<UInt64>, batchID: BatchID = .random()) throws -> [UInt8] {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        for sequence in sequences {
            let event = Event(
                name: "ViewProduct", time: 1_700_000_000_000 + Int64(sequence), trackID: sequence &* 0x9E37, sequence: sequence,
                distinctID: "user-1", anonymousID: anonymousID, lib: LibInfo(lib: "Swift", libVersion: "1.0", method: .code),
                properties: ["price": .double(Double(sequence))])
            try encoder.appendBatchEntry(event, to: &payload)
        }
        return try BatchFrame.encode(payload: payload, recordCount: sequences.count, batchID: batchID,
                                     sealedAt: 1_700_000_000_000, codec: .zstd)
    }
}

/// One POST through URLSession, as the uploader makes it.
enum Post {
    /// The status and headers, or the error the client saw.
    static func batch(_ body: [UInt8], to url: URL, batchID: BatchID? = nil, retry: Int? = nil,
                      timeout: TimeInterval = 10) async -> Result<(status: Int, headers: [String: String], body: String), any Error> {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/x-spoor-batch", forHTTPHeaderField: "Content-Type")
        if let batchID { request.setValue("\(batchID)", forHTTPHeaderField: "Spoor-Batch-Id") }
        if let retry { request.setValue("\(retry)", forHTTPHeaderField: "Spoor-Retry-Count") }
        // On Linux the session's timeout is the one that counts, in whole seconds.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
            return .success((http.statusCode, headers, String(decoding: data, as: UTF8.self)))
        } catch {
            return .failure(error)
        }
    }
}
