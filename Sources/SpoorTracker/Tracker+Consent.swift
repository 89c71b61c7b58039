import Foundation
import SpoorLog

/// What ``Tracker/optOut(deleteStoredData:)`` erased.
public struct ErasedData: Sendable, Hashable {
    /// Events accepted but not yet written, dropped from memory.
    public var pendingEvents: Int
    /// Records removed from the durable log.
    public var records: Int
    /// Sealed batches removed from the outbox before upload.
    public var batches: Int
    /// Damaged files kept aside for inspection (`.bad`) that were deleted.
    public var quarantinedFiles: Int

    /// Creates a summary.
    public init(pendingEvents: Int = 0, records: Int = 0, batches: Int = 0, quarantinedFiles: Int = 0) {
        self.pendingEvents = pendingEvents
        self.records = records
        self.batches = batches
        self.quarantinedFiles = quarantinedFiles
    }

    /// Everything erased, whatever its kind.
    public var total: Int { pendingEvents + records + batches + quarantinedFiles }
}

// MARK: - Consent

extension Tracker {
    /// Whether the user opted out: nothing is recorded, sealed or uploaded until ``optIn()``. Persisted
    /// across launches; a fresh install starts with ``Configuration/Tracking/startsOptedOut``.
    public var isOptedOut: Bool { pipeline.identity.isOptedOut }

    /// Stops tracking, for this launch and the next ones, until ``optIn()``.
    ///
    /// An open session is ended first (`$AppPageLeave`s, then `$AppEnd`), so the recorded data stays
    /// paired; after that, `track`, profiles, `$SignUp` and auto-tracking record nothing. Identity and super
    /// property calls are still remembered locally (no event is recorded for them), so the app's state is
    /// right when the user opts in again.
    ///
    /// - Parameter deleteStoredData: also erase, durably, what is stored and not yet delivered: events
    ///   waiting in memory, the durable log, the outbox and damaged files kept aside; where several processes share
    ///   the storage directory, also the logs of processes that are gone, the batches the collector refused, and
    ///   (at their next call) what every other running process holds.
    /// - Returns: what was erased (all zero unless `deleteStoredData`).
    @discardableResult
    public func optOut(deleteStoredData: Bool = false) async -> ErasedData {
        // Uploads stop first: nothing stored goes out once the user said no (and with `deleteStoredData`, nothing
        // goes out before it is erased).
        uploader?.setConsent(granted: false)
        // The session's end is recorded before the opt-out takes effect.
        await lifecycle.setQuiet(true).value
        let pending = pipeline.optOut(discardingBuffer: deleteStoredData)
        // Again, now that the opt-out holds: another process's opt-in seen meanwhile may have given consent back.
        uploader?.setConsent(granted: false)
        // Saved with the opt-out: every other process sharing the storage directory erases what it holds too.
        if deleteStoredData { pipeline.countErasure() }
        logger.info("spoor: the user opted out of tracking", metadata: ["deleteStoredData": "\(deleteStoredData)"])
        // Wait for the writer: the group it may be writing lands before the erase, and the state is saved.
        _ = await pipeline.requestFlush().value
        guard deleteStoredData else { return ErasedData() }
        // A damaged state file kept aside holds identity and super properties.
        let corruptState = configuration.storageDirectory.appendingPathComponent(StorageLayout.corruptTrackerStateName)
        let corruptRemoved = (try? FileManager.default.removeItem(at: corruptState)) != nil ? 1 : 0
        do {
            let erased = try pipeline.store.erase(goneProcesses: true, following: pipeline.identity.deletions)
            return ErasedData(
                pendingEvents: pending, records: erased.records, batches: erased.batches,
                quarantinedFiles: erased.quarantinedFiles + corruptRemoved)
        } catch {
            logger.error("spoor: erasing the stored events failed", metadata: ["error": "\(error)"])
            return ErasedData(pendingEvents: pending)
        }
    }

    /// Resumes tracking after ``optOut(deleteStoredData:)`` (or a fresh install's
    /// ``Configuration/Tracking/startsOptedOut``). Persisted. When the app is in the foreground a new session starts
    /// at once (`$AppStart` and `$AppViewScreen` for the visible pages, timed from now); nothing that
    /// happened while opted out is recorded afterwards.
    public func optIn() {
        guard pipeline.change(.optIn).changed else { return }
        logger.info("spoor: the user opted in to tracking")
        lifecycle.setQuiet(false)
        uploader?.setConsent(granted: true)
    }
}
