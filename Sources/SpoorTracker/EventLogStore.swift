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
    /// Called after each append with the number of records waiting in the log (the uploader's bulk trigger).
    let afterAppend = Locked<(@Sendable (Int) -> Void)?>(nil)

    init(log: EventLog, logger: Logger) {
        self.log = log
        self.logger = logger
    }

    /// Opens (or creates) the log in `directory` (the `log` folder of the storage directory) with the tracker's limits.
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

    func append(_ events: [StoredEvent]) {
        for stored in events {
            do {
                if let base = stored.base {
                    try appendSpliced(stored.event, base: base, firstDay: stored.firstDay)
                } else {
                    try records.append(stored.event, using: encoder)
                }
            } catch {
                // Validation makes this unreachable in practice; count it as dropped rather than lose it silently.
                encodeFailures.add(1, ordering: .relaxed)
                logger.error("spoor: an event could not be encoded", metadata: ["event": "\(stored.event.name)", "error": "\(error)"])
            }
        }
        guard !records.isEmpty else { return }
        log.append(records)
        records.removeAll(keepingCapacity: true)
        if let afterAppend = afterAppend.withLock({ $0 }) { afterAppend(log.recordCount) }
    }

    // MARK: Splicing the base properties

    // A protobuf map is a repeated field: its entries may come in any order and in several runs, so the
    // encoding of the event's own properties followed by the base's entries is the encoding of the event with
    // all of them. The tracker hands over only events whose own keys are not base keys, so no key repeats.

    private var baseOwner: ObjectIdentifier?
    /// The encoded `properties` entries of the base, with `$is_first_day` false and true.
    private var baseEntries: (notFirstDay: [UInt8], firstDay: [UInt8]) = ([], [])

    private func appendSpliced(_ event: Event, base: Snapshot, firstDay: Bool) throws(EncodeError) {
        if baseOwner != ObjectIdentifier(base) {
            baseEntries = (
                try Self.propertyEntries(of: base.base.merging(["$is_first_day": false]) { $1 }, encoder: encoder),
                try Self.propertyEntries(of: base.base.merging(["$is_first_day": true]) { $1 }, encoder: encoder)
            )
            baseOwner = ObjectIdentifier(base)
        }
        // Encoded in place in the record buffer, the base's entries copied once behind the event's own fields.
        try records.append(event, suffix: firstDay ? baseEntries.firstDay : baseEntries.notFirstDay, using: encoder)
    }

    /// The bytes of the `properties` fields (number 10) of an event that has only `properties`.
    static func propertyEntries(of properties: Properties, encoder: EventEncoder) throws(EncodeError) -> [UInt8] {
        let carrier = Event(
            name: "", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .unspecified),
            properties: properties)
        let bytes = try encoder.encode(carrier)
        var entries: [UInt8] = []
        var index = 0
        func varint() -> UInt64? { Varint.read(bytes, at: &index) }
        while index < bytes.count {
            let start = index
            guard let key = varint() else { break }
            switch key & 7 {
            case 0: _ = varint()
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = varint() else { break }
                index += Int(length)
            default:
                index = bytes.count
            }
            if key >> 3 == 10, key & 7 == 2, index <= bytes.count { entries.append(contentsOf: bytes[start..<index]) }
        }
        return entries
    }

    func sync() throws { try log.sync() }

    func close() { log.close() }

    func erase() throws -> ErasedLogContents { try log.eraseAll() }

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
