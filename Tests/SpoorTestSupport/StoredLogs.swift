public import Foundation
public import SpoorModel
import SpoorLog
import SpoorWire

/// What the per-process logs of a tracker's storage directory hold, read the way `spoor events` reads them.
public enum StoredLogs {
    /// The log directory of each process that opened `storage` (and an older Spoor's `log` folder), by name.
    public static func directories(in storage: URL) -> [URL] {
        SharedLogArea(storageDirectory: storage).members().map { URL(fileURLWithPath: $0.path, isDirectory: true) }
    }

    /// The one log directory of `storage`: a test that ran one tracker over it.
    public static func only(in storage: URL) throws -> URL {
        let all = directories(in: storage)
        guard all.count == 1 else { throw StoredLogsError(reason: "expected one log directory, found \(all.map(\.lastPathComponent))") }
        return all[0]
    }

    /// Every event stored in `storage`: in sealed batches (outbox and claimed) and in live records, of every
    /// process's log, in sequence order (one tracker's events, whichever process's log now holds them).
    public static func events(in storage: URL) throws -> [Event] {
        var events: [Event] = []
        let decoder = EventDecoder()
        for directory in directories(in: storage) {
            let snapshot = try EventLog.snapshot(directory: directory)
            for batch in snapshot.batches + snapshot.claimed {
                guard let frame = batch.frame else { throw StoredLogsError(reason: "unreadable batch \(batch.file)") }
                events += try decoder.decodeBatch(frame.payload)
            }
            for record in snapshot.records { events += try decoder.decodeBatch(record.batch) }
        }
        return events.enumerated().sorted { ($0.element.sequence, $0.offset) < ($1.element.sequence, $1.offset) }.map(\.element)
    }
}

/// Why ``StoredLogs`` could not read a storage directory.
public struct StoredLogsError: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
