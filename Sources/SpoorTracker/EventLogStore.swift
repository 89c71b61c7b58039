import Foundation
import Logging
import SpoorModel
import SpoorWire
package import SpoorLog
import SpoorSystem

/// Stores the tracker's events in the durable ``EventLog``.
///
/// The writer thread encodes each group of events into one ``RecordBuffer`` (protobuf `Batch` entries,
/// framed and checksummed) and appends it as one write group; nothing here runs on a caller's thread.
package final class EventLogStore: EventStore, @unchecked Sendable {
    // @unchecked: `encoder` and `records` are used by the writer thread only (EventStore's contract);
    // `log` is thread-safe.
    package let log: EventLog
    private let encoder = EventEncoder()
    private var records = RecordBuffer()
    private let logger: Logger
    private let encodeFailures = Locked(0)
    /// Called after each append with the number of records waiting in the log (the uploader's bulk trigger).
    private let afterAppend = Locked<AfterAppend?>(nil)

    /// The callback in a struct: a closure kept directly as a ``Locked``'s generic value is wrapped in one more
    /// conversion thunk each time it is read back through `withLock`, so every call would cost more than the last.
    private struct AfterAppend {
        let body: @Sendable (Int) -> Void
    }

    /// The last sequence number of the records adopted from logs of processes that are gone (sealed at open).
    private let adoptedLastSequence: UInt64?

    init(log: EventLog, logger: Logger, adoptedLastSequence: UInt64? = nil) {
        self.log = log
        self.logger = logger
        self.adoptedLastSequence = adoptedLastSequence
    }

    /// Opens a log of this process's own in the storage directory's `logs` folder with the tracker's limits,
    /// adopting the logs of processes that are gone (docs/event-log.md, "Several processes"), their lifecycle files
    /// turned into events on the way (``AdoptedLifecycle``).
    convenience init(storageDirectory: URL, configuration: Configuration) throws(ConfigurationError) {
        do {
            let adopted = Locked<UInt64?>(nil)
            // One state file for every question the log asks of it (the count is one load of its mapped word).
            let stateFile = PersistentStateFile(directory: storageDirectory)
            let log = try EventLog.openShared(
                storageDirectory: storageDirectory, configuration: configuration.logConfiguration,
                logger: configuration.diagnostics.logger,
                lifecycle: AdoptedLifecycle.recovery(
                    storageDirectory: storageDirectory, enabled: LifecycleOptions(configuration: configuration).enabled,
                    logger: configuration.diagnostics.logger),
                erasures: { stateFile.erasures },
                adopted: { payload in
                    if let last = Self.lastSequence(in: payload) { adopted.withLock { $0 = max($0 ?? 0, last) } }
                })
            self.init(log: log, logger: configuration.diagnostics.logger, adoptedLastSequence: adopted.withLock { $0 })
        } catch {
            throw ConfigurationError(field: "storageDirectory", reason: "the event log cannot be opened: \(error)")
        }
    }

    /// The largest sequence number of the events in one record as the log hands it out.
    private static func lastSequence(in payload: [UInt8]) -> UInt64? {
        guard let events = try? EventDecoder().decodeBatch(payload) else { return nil }
        return events.map(\.sequence).max()
    }

    package var durableLog: EventLog? { log }

    package func onAppend(_ body: (@Sendable (Int) -> Void)?) {
        afterAppend.withLock { $0 = body.map(AfterAppend.init) }
    }

    package func append(_ events: inout [StoredEvent]) {
        for index in events.indices {
            do {
                if let base = events[index].base {
                    try appendWithContext(&events[index].event, base: base, firstDay: events[index].firstDay)
                } else {
                    try records.append(events[index].event, using: encoder)
                }
            } catch {
                // Validation makes this unreachable in practice; count it as dropped rather than lose it silently.
                encodeFailures.withLock { $0 += 1 }
                logger.error(
                    "spoor: an event could not be encoded", metadata: ["event": "\(events[index].event.name)", "error": "\(error)"])
            }
        }
        guard !records.isEmpty else { return }
        log.append(records)
        records.removeAll(keepingCapacity: true)
        if let afterAppend = afterAppend.withLock({ $0 }) { afterAppend.body(log.recordCount) }
    }

    // MARK: Context records

    // What nearly every event repeats (ids, lib, session, the preset and super properties with
    // `$is_first_day`) is written once, as a context record, and each event record holds only its own fields
    // and `context = 1`: "extend the last context before me" (`Batch` in proto/spoor/v1/event.proto). Merging
    // the event over its context gives the same event as the tracker's merge, because the tracker hands over
    // only events whose own keys are not keys of the base (a protobuf map merge keeps both sets of entries).

    /// What the context in effect was made from; a new one is written when any part changes. It holds the
    /// snapshot itself, so a later snapshot can never be taken for it by reusing its address.
    private struct ContextKey: Equatable {
        var snapshot: Snapshot
        var firstDay: Bool
        var sessionID: String?

        static func == (a: Self, b: Self) -> Bool {
            a.snapshot === b.snapshot && a.firstDay == b.firstDay && a.sessionID == b.sessionID
        }
    }

    private var contextKey: ContextKey?
    /// The time and sequence the context in effect holds; events store their differences from them.
    private var contextBase: (time: EpochMilliseconds, sequence: UInt64) = (0, 0)
    private var contextSnapshot: Snapshot?
    /// The fields after an event's own: the context reference and the time and sequence offsets.
    private var suffix: [UInt8] = []
    /// The encoded `properties` entries of the base, with `$is_first_day` false and true.
    private var baseEntries: (notFirstDay: [UInt8], firstDay: [UInt8]) = ([], [])

    /// Appends `event`, the own fields of a `StoredEvent` with a base, extending the context made from `base`.
    /// Leaves `event` without its time, sequence and session, which the context and the offsets carry.
    private func appendWithContext(_ event: inout Event, base: Snapshot, firstDay: Bool) throws(EncodeError) {
        if contextSnapshot !== base {
            baseEntries = (
                try ContextRecord.propertyEntries(of: base.base.merging(["$is_first_day": false]) { $1 }, using: encoder),
                try ContextRecord.propertyEntries(of: base.base.merging(["$is_first_day": true]) { $1 }, using: encoder)
            )
            contextSnapshot = base
        }
        let key = ContextKey(snapshot: base, firstDay: firstDay, sessionID: event.sessionID)
        if key != contextKey {
            let lib = base.libCode
            let context = Event(
                name: "", type: .unrecognized(0), time: event.time, trackID: 0, sequence: event.sequence,
                distinctID: base.distinctID, anonymousID: base.anonymousID, loginID: base.loginID,
                lib: LibInfo(lib: lib.lib, libVersion: lib.libVersion, method: .unspecified, appVersion: lib.appVersion),
                properties: [:], sessionID: event.sessionID)
            try records.appendContext(context, suffix: firstDay ? baseEntries.firstDay : baseEntries.notFirstDay, using: encoder)
            contextKey = key
            contextBase = (event.time, event.sequence)
        }
        // The event holds only its own fields (`StoredEvent`); empty strings and zeros are not written. Time
        // and sequence are small offsets from the context's (`time_offset`, `sequence_offset`), which the merge
        // rule adds back. Cleared in place: a copy would retain and release every string and the properties.
        suffix.removeAll(keepingCapacity: true)
        ContextRecord.appendReference(
            time: event.time, sequence: event.sequence, contextTime: contextBase.time, contextSequence: contextBase.sequence,
            to: &suffix)
        event.time = 0
        event.sequence = 0
        event.sessionID = nil
        try records.append(event, suffix: suffix, using: encoder)
    }

    package func sync() throws { try log.sync() }

    package func close() { log.close() }

    /// Erases this process's log, and with `goneProcesses` what processes that are gone left (running ones erase
    /// their own when they see the erasure in the shared state).
    package func erase(goneProcesses: Bool, following erasures: UInt64) throws -> ErasedLogContents {
        var erased = try log.eraseAll()
        log.noteErasuresFollowed(erasures)
        guard goneProcesses else { return erased }
        let gone = log.eraseGoneLogs()
        erased.records += gone.records
        erased.batches += gone.batches
        erased.quarantinedFiles += gone.quarantinedFiles
        return erased
    }

    package func lastSequence() -> UInt64? {
        let decoder = EventDecoder()
        var last = adoptedLastSequence
        log.forEachRecord { payload in
            guard let events = try? decoder.decodeBatch(payload) else { return }
            for event in events { last = max(last ?? 0, event.sequence) }
        }
        return last
    }

    package var droppedCount: Int { Int(log.counters.dropped) + encodeFailures.withLock { $0 } }
    package var corruptCount: Int { Int(log.counters.corrupt) }
}
