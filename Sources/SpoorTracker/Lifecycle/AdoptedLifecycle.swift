package import Foundation
package import Logging
package import SpoorLog
import SpoorModel
import SpoorWire

/// Makes the events a gone process's lifecycle files stand for (`AppCrashed`, the page leaves and `$AppEnd` of a
/// session it never closed, as ``CrashRecovery`` decides them), for whoever adopts its log
/// (docs/lifecycle.md, "Crash and kill recovery").
///
/// They are that process's events, so they are made as it would have made them: over the context in effect at the
/// end of its log (its ids, session, preset and super properties), numbered with sequence numbers leased from the
/// shared state (past the last one it used). Only the kinds it emitted are made (its checkpoint lists them), and none while the
/// install is opted out. A log that holds no context (the process recorded nothing, as an opted-out one) gives none.
package enum AdoptedLifecycle {
    /// The recovery a tracker hands to its log (and `spoor upload` to its own): `enabled` is used for a checkpoint
    /// that does not list its kinds.
    package static func recovery(storageDirectory: URL, enabled: Set<AutoTrackEventKind>, logger: Logger) -> LifecycleRecovery {
        LifecycleRecovery { log in
            records(for: log, storageDirectory: storageDirectory, enabled: enabled, logger: logger)
        }
    }

    /// The records for the lifecycle files in `log`'s directory; nil when they stand for no event.
    static func records(for log: EventLog, storageDirectory: URL, enabled: Set<AutoTrackEventKind>, logger: Logger) -> RecordBuffer? {
        let events = events(for: log, storageDirectory: storageDirectory, enabled: enabled, logger: logger)
        guard !events.isEmpty else { return nil }
        let encoder = EventEncoder()
        var records = RecordBuffer()
        for event in events {
            do {
                try records.append(event, using: encoder)
            } catch {
                logger.error("spoor: a recovered event could not be encoded", metadata: ["event": "\(event.name)", "error": "\(error)"])
            }
        }
        return records
    }

    /// The events, whole, in the order ``CrashRecovery`` gives them.
    static func events(for log: EventLog, storageDirectory: URL, enabled: Set<AutoTrackEventKind>, logger: Logger) -> [Event] {
        var checkpoint: LifecycleCheckpoint?
        switch LifecycleCheckpointStore(directory: log.directory).load() {
        case .success(let loaded): checkpoint = loaded
        case .failure(let error): logger.warning("spoor: \(error.description); nothing to recover from it")
        }
        let crash = CrashMarker.readPrevious(in: log.directory)
        let kinds = checkpoint?.enabled.map { Set($0.compactMap(AutoTrackEventKind.init(rawValue:))) } ?? enabled
        let emitted: [(AutoTrackEventKind, Properties, EpochMilliseconds?)] = CrashRecovery.effects(checkpoint: checkpoint, crash: crash)
            .compactMap { effect in
                guard case .emit(let kind, let properties, let time) = effect, kinds.contains(kind) else { return nil }
                return (kind, properties, time)
            }
        guard !emitted.isEmpty else { return [] }
        let stateFile = PersistentStateFile(directory: storageDirectory)
        if stateFile.read()?.optedOut == true { return [] }
        guard let context = log.tailContext, let base = wholeContext(context) else {
            logger.notice("spoor: a gone process left a session or crash but recorded no event to take its context from; nothing recovered",
                          metadata: ["log": "\(log.directory.path)"])
            return []
        }
        let decoder = EventDecoder()
        var last = base.sequence
        log.forEachRecord { payload in
            guard let events = try? decoder.decodeBatch(payload) else { return }
            for event in events { last = max(last, event.sequence) }
        }
        // Numbers of their own, leased like a writer's, so no running process gives them too.
        // A number past any real count in a damaged log is not taken for a floor (the state file would become
        // unreadable).
        let count = UInt64(emitted.count)
        var next: UInt64
        if let first = try? stateFile.lease(count, from: PersistentStateFile.floor(after: last)) {
            next = first
        } else {
            next = max(PersistentStateFile.floor(after: last), stateFile.leasedFrontier)
            logger.error("spoor: no sequence numbers could be leased for recovered events; numbered past what was leased")
        }
        return emitted.map { kind, properties, time in
            defer { next += 1 }
            var event = base
            event.name = kind.eventName
            event.type = .track
            event.time = time ?? base.time
            event.sequence = next
            event.trackID = 0
            event.lib.method = .autoTrack
            event.originalID = nil
            event.properties = base.properties.merging(properties) { $1 }
            return event
        }
    }

    /// The context record `payload` made whole: its ids, lib, session, properties, time and sequence.
    private static func wholeContext(_ payload: [UInt8]) -> Event? {
        var probe: [UInt8] = []
        var suffix: [UInt8] = []
        ContextRecord.appendReference(timeOffset: 0, sequenceOffset: 0, to: &suffix)
        let event = Event(name: "$probe", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .autoTrack))
        guard (try? EventEncoder().appendBatchEntry(event, suffix: suffix, to: &probe)) != nil,
              let events = try? EventDecoder().decodeBatch(payload + probe), events.count == 1
        else { return nil }
        return events[0]
    }
}
