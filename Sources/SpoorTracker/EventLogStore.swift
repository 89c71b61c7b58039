import Foundation
import Logging
import SpoorCore
import SpoorSerializer
import SpoorTransport
import Synchronization

/// Stores the tracker's events in the durable ``EventLog``.
///
/// The writer thread encodes each group of events into one ``RecordBuffer`` (protobuf `Batch` entries,
/// framed and checksummed) and appends it as one write group; nothing here runs on a caller's thread.
final class EventLogStore: EventStore, @unchecked Sendable {
    // @unchecked: `encoder` and `records` are used by the writer thread only (EventStore's contract);
    // `log` is thread-safe.
    let log: EventLog
    private let encoder = EventEncoder()
    private var records = RecordBuffer()
    private let logger: Logger
    private let encodeFailures = Atomic<Int>(0)

    init(log: EventLog, logger: Logger) {
        self.log = log
        self.logger = logger
    }

    /// Opens (or creates) the log in `directory` with the tracker's limits.
    convenience init(directory: URL, configuration: Configuration) throws(ConfigurationError) {
        var logConfiguration = EventLog.Configuration()
        logConfiguration.maxBytes = configuration.maxLogBytes
        logConfiguration.maxRecords = configuration.maxQueuedEvents
        logConfiguration.durability = configuration.durability
        let wallClock = configuration.wallClock
        logConfiguration.now = { wallClock.nowMilliseconds() }
        do {
            let log = try EventLog(directory: directory, configuration: logConfiguration, logger: configuration.logger)
            self.init(log: log, logger: configuration.logger)
        } catch {
            throw ConfigurationError(field: "storageDirectory", reason: "the event log cannot be opened: \(error)")
        }
    }

    func append(_ events: [Event]) {
        for event in events {
            do {
                try records.append(event, using: encoder)
            } catch {
                // Validation makes this unreachable in practice; count it as dropped rather than lose it silently.
                encodeFailures.add(1, ordering: .relaxed)
                logger.error("spoor: an event could not be encoded", metadata: ["event": "\(event.name)", "error": "\(error)"])
            }
        }
        guard !records.isEmpty else { return }
        log.append(records)
        records.removeAll(keepingCapacity: true)
    }

    func sync() throws { try log.sync() }

    func close() { log.close() }

    func lastSequence() -> UInt64? {
        let decoder = EventDecoder()
        var last: UInt64?
        log.forEachRecord { payload in
            guard let events = try? decoder.decodeBatch(payload) else { return }
            for event in events { last = max(last ?? 0, event.sequence) }
        }
        return last
    }

    var droppedCount: Int { Int(log.counters.dropped) + encodeFailures.load(ordering: .relaxed) }
    var corruptCount: Int { Int(log.counters.corrupt) }
}
