import Foundation
import Logging
import SpoorSystem

/// Whether a pipeline's store is closed by its writer at the end or handed, open, to the next tracker of this
/// process over the same storage directory.
///
/// A released tracker does not wait for its writer, and the next tracker does not wait either: it takes the
/// open store (no second open of the log, whose directory lock the released writer still holds) and its writer
/// starts once the released one has finished. Whoever comes first decides: the released writer closing at its
/// end, or the next tracker taking the store.
final class StoreHandover: Sendable {
    private enum Stage { case open, handedOver, closed }
    private let stage = Locked(Stage.open)

    /// The writer ends: true when it is to close the store (nobody took it), false when it was handed over.
    func closeUnlessHandedOver() -> Bool {
        stage.withLock { stage in
            guard stage == .open else { return false }
            stage = .closed
            return true
        }
    }

    /// The next tracker takes the store: true when it is still open (now the taker's to close), false when the
    /// writer has closed it already (open it again).
    func handOver() -> Bool {
        stage.withLock { stage in
            guard stage == .open else { return false }
            stage = .handedOver
            return true
        }
    }

    /// Whether the writer has closed the store.
    var isClosed: Bool { stage.withLock { $0 == .closed } }
}

/// Released trackers of this process whose writers may still be using their storage directories' logs.
enum ReleasedTrackers {
    /// What a released tracker leaves to the next one over its directory.
    struct Release: Sendable {
        let store: EventLogStore
        /// Identity, consent, super properties and the next sequence number as the released tracker left them:
        /// newer than `state.json` until its writer has saved them.
        let state: PersistedState
        /// Its changes the state file may not hold yet (its writer saves them as it ends, unless that fails): the
        /// successor keeps them unsaved too, so a later read of the file does not drop them.
        let unsaved: [SharedChange]
        /// Fulfilled once the released tracker's writer has ended (it no longer touches the store).
        let writerDone: Promise<Bool>
        let handover: StoreHandover
    }

    private static let released = Locked<[String: Release]>([:])

    /// Notes a released tracker's store, for the next tracker over `directory`.
    static func add(_ release: Release, for directory: URL) {
        released.withLock { released in
            released = released.filter { !$0.value.handover.isClosed }
            released[directory.standardizedFileURL.path] = release
        }
    }

    /// Blocks until a released tracker's writer has ended (`writerDone`), saying once a minute that it still
    /// waits. No bound: that writer only finishes its last group, and giving up would have two writers on one log.
    static func waitForWriter(_ writerDone: Promise<Bool>, logger: Logger) {
        while writerDone.wait(timeout: .seconds(60)) == nil {
            logger.warning("spoor: still waiting for a released tracker's writer to finish with the event log")
        }
    }

    /// The store a released tracker left open over `directory`, now the caller's: nil when there is none, or
    /// its writer has closed it (then the directory is free to open).
    static func take(_ directory: URL) -> Release? {
        guard let release = released.withLock({ $0.removeValue(forKey: directory.standardizedFileURL.path) }) else {
            return nil
        }
        return release.handover.handOver() ? release : nil
    }
}
