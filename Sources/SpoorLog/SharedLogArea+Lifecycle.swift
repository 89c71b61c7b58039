import Foundation
import Logging
import SpoorSystem

/// Turns the lifecycle files a process left in its log (its `lifecycle.checkpoint` and `crash.marker`) into the
/// events they stand for: the `$AppEnd` of a session it never closed, the page leaves before it, its `AppCrashed`.
/// The tracker knows those files and events; the log only runs the steps that keep them exactly once.
package struct LifecycleRecovery: Sendable {
    /// The records of the events the files in `log`'s directory stand for (whole events, extending no context), or
    /// nil when they stand for none. Called by the adopter of `log`, which holds its lock, with the files in place;
    /// called again with the same files when an adopter was killed before the records were written.
    package var records: @Sendable (_ log: EventLog) -> RecordBuffer?

    package init(records: @escaping @Sendable (_ log: EventLog) -> RecordBuffer?) {
        self.records = records
    }
}

extension SharedLogArea {
    /// What became of an adopted log's lifecycle files.
    enum LifecycleOutcome {
        /// None left: turned into events appended to the log (or standing for none), or there were none.
        case done
        /// They stay, and so does the log's folder, for an adopter that can finish: this one has no
        /// ``LifecycleRecovery``, or could not note the position or remove the files. The log may be sealed.
        case kept
        /// Events were appended but could not be forced to disk: the log must not be sealed now (a seal could take
        /// them from memory while the note says they were never written). Its next adopter makes them again.
        case unsealable
    }

    /// Turns the lifecycle files of the adopted `log` into events appended to it, before it is sealed, and removes
    /// the files.
    ///
    /// Exactly once through a kill -9 at any point: the position the events will start at is written first
    /// (`lifecycle.recovered`, durably), then the events are appended and forced to disk, then the files removed, the
    /// note last. An adopter that finds the note with the files still there looks at where the log ends: past the
    /// position, the events were written (nothing else appends to a log whose adopter holds its lock), and only the
    /// files' removal is left; at it, nothing was written (a torn write is cut back to it) and it makes them again.
    /// The log is sealed only after the note is gone, so the events are still in the log when the note is read.
    func recoverLifecycle(of log: EventLog, logger: Logger, afterStep: ((AdoptionStep, String) -> Void)?) -> LifecycleOutcome {
        let directory = log.path
        let notePath = directory + "/" + StorageLayout.lifecycleRecoveredName
        let files = StorageLayout.lifecycleFileNames.map { directory + "/" + $0 }
        let note = (try? FileIO.readFile(notePath, limit: 64)).flatMap(Self.decodeNote)
        let present = files.filter { access($0, F_OK) == 0 }
        guard !present.isEmpty || Self.holdsLifecycleFiles(directory) else { return .done }
        // Whether events stand for the files: their removal must then reach the disk before the note's.
        var noted = note != nil
        if let note, log.tailPosition > note {
            // Written before a kill: only the removal of the files is left.
        } else if !present.isEmpty {
            guard let lifecycle else { return .kept }
            if let records = lifecycle.records(log), !records.isEmpty {
                if note == nil {
                    do {
                        try AtomicFile.write(Self.encodeNote(log.tailPosition), to: notePath, durable: true)
                    } catch {
                        logger.error("spoor: cannot note the recovery of a gone process's session", metadata: [
                            "log": "\(directory)", "error": "\(error)",
                        ])
                        return .kept
                    }
                    afterStep?(.lifecycleNoted, directory)
                    noted = true
                }
                log.append(records)
                do {
                    try log.sync()
                } catch {
                    logger.error("spoor: cannot store the recovered session of a gone process", metadata: [
                        "log": "\(directory)", "error": "\(error)",
                    ])
                    return .unsealable
                }
                afterStep?(.lifecycleRecovered, directory)
            }
        }
        do {
            for file in files {
                try FileIO.unlink(file)
                afterStep?(.removed, directory)
            }
            // The files' removal must be on disk before the note's: a note gone with the files back would make the
            // events again. (A note that stands for nothing, damaged or cut short, just goes.)
            if noted { try FileIO.syncDirectory(directory) }
            try FileIO.unlink(notePath)
            try FileIO.unlink(StorageLayout.temporaryName(for: notePath))
        } catch {
            logger.error("spoor: cannot remove the lifecycle files of a gone process", metadata: [
                "log": "\(directory)", "error": "\(error)",
            ])
            return .kept
        }
        return .done
    }

    /// Whether the log in `path` holds lifecycle files not yet turned into events.
    static func holdsLifecycleFiles(_ path: String) -> Bool {
        let note = StorageLayout.lifecycleRecoveredName
        return (StorageLayout.lifecycleFileNames + [note, StorageLayout.temporaryName(for: note)])
            .contains { access(path + "/" + $0, F_OK) == 0 }
    }

    /// The note's content: `<segment> <offset>` in decimal and a newline.
    static func encodeNote(_ position: LogPosition) -> [UInt8] {
        Array("\(position.segment) \(position.offset)\n".utf8)
    }

    /// The position in a note, or nil when it is not one (then it is ignored: the files are read as new).
    static func decodeNote(_ bytes: [UInt8]) -> LogPosition? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n") else { return nil }
        let parts = text.dropLast().split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, let segment = UInt64(parts[0]), let offset = Int(parts[1]), offset >= 0,
              encodeNote(LogPosition(segment: segment, offset: offset)) == bytes
        else { return nil }
        return LogPosition(segment: segment, offset: offset)
    }
}

extension EventLog {
    /// Where the log ends: the end of its last segment, or the start of the next one when it has none. An append
    /// moves it forward; a recovery gives the same position again (a torn write is cut back to it).
    package var tailPosition: LogPosition {
        state.withLock { state in
            state.segments.list.last.map { LogPosition(segment: $0.id, offset: $0.end) }
                ?? LogPosition(segment: state.segments.nextID, offset: 0)
        }
    }

    /// The payload of the context record in effect at the end of the log (what the last records extend), nil when
    /// the log holds none.
    package var tailContext: [UInt8]? {
        state.withLock { $0.segments.tailContext }
    }
}
