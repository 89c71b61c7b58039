internal import SpoorModel
public import SpoorWire

/// What the uploader is doing (one value per state; a change is logged once).
public enum UploadState: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Nothing to send, or waiting for the next trigger.
    case idle
    /// A request is in flight.
    case uploading
    /// The last attempt failed (408, 429, 5xx, timeout, network); waiting out the backoff.
    case backingOff
    /// The collector asked for a pause (`Retry-After`); nothing is sent until it ends.
    case pausedByServer
    /// The collector answered 401 or 403; paused until a new launch, a new token or `flush()`.
    case pausedForAuthorization
    /// The upload policy (or the network) does not allow uploads now.
    case waitingForPolicy
    /// The user opted out: nothing is sealed or sent until they opt in again.
    case pausedForConsent
    /// Stopped; the batches wait in the outbox for the next launch.
    case stopped

    public var description: String { rawValue }
}

/// What the uploader has counted (lifetime totals, kept in the log directory's `upload.json`).
public struct UploadCounters: Sendable, Hashable, Codable {
    /// Batches the collector accepted (2xx), duplicates included.
    public var deliveredBatches = 0
    /// Events in those batches.
    public var deliveredEvents = 0
    /// Frame bytes of those batches.
    public var deliveredBytes = 0
    /// Accepted batches the collector had already stored (`"duplicate": true`): a lost answer retried.
    public var duplicateBatches = 0
    /// Requests sent.
    public var requests = 0
    /// Attempts that failed and will be retried (408, 429, 5xx, timeouts, network errors).
    public var retries = 0
    /// Failed attempts that were timeouts.
    public var timeouts = 0
    /// Batches split in two after a 413.
    public var splits = 0
    /// Batches set aside in the rejected area.
    public var rejectedBatches = 0
    /// Events in those batches.
    public var rejectedEvents = 0
    /// Batches the rejected area dropped (oldest first) to stay within its limits.
    public var rejectedDropped = 0
    /// Times uploads were paused by a 401 or 403.
    public var authorizationPauses = 0
    /// Times the collector asked for a pause with `Retry-After`.
    public var serverPauses = 0
    /// The current state.
    public var state = UploadState.idle
    /// The last HTTP status received, if any.
    public var lastStatus: Int?
    /// The last failure (an error, or a status with the collector's reason), if any.
    public var lastError: String?
    /// When the next attempt is due (milliseconds since the epoch) while backing off or paused by the server.
    public var nextAttemptAt: Int64?

    /// Creates zeroed counters.
    public init() {}
}

/// Why events are still waiting after a flush.
public enum PendingReason: Sendable, Hashable, CustomStringConvertible {
    /// No server URL is configured: events stay local.
    case noServer
    /// The last attempt failed; the next is due at `nextAttemptAt` (milliseconds since the epoch).
    case backingOff(nextAttemptAt: Int64, lastError: String)
    /// The collector asked for a pause (`Retry-After`) until `until` (milliseconds since the epoch).
    case pausedByServer(until: Int64)
    /// The collector refused the credentials (401 or 403).
    case authorizationRejected(status: Int)
    /// The upload policy does not allow uploads on this network.
    case policy(String)
    /// The user opted out of tracking; what is stored waits until they opt in.
    case optedOut
    /// The storage refused an operation.
    case storage(String)
    /// The flush's time ran out first; the upload goes on in the background.
    case timedOut
    /// The uploader (or tracker) is shut down.
    case stopped

    public var description: String {
        switch self {
        case .noServer: "no server URL is configured"
        case .backingOff(let at, let error): "the last attempt failed (\(error)); next attempt at \(Self.time(at))"
        case .pausedByServer(let until): "the collector asked for a pause until \(Self.time(until))"
        case .authorizationRejected(let status): "the collector refused the credentials (\(status))"
        case .policy(let name): "the upload policy (\(name)) does not allow uploads now"
        case .optedOut: "the user opted out; nothing is uploaded until they opt in"
        case .storage(let reason): "storage: \(reason)"
        case .timedOut: "the flush timed out"
        case .stopped: "the uploader is stopped"
        }
    }

    /// Milliseconds since the epoch as people read them (ISO 8601, UTC).
    private static func time(_ milliseconds: Int64) -> String {
        ISO8601Millis.format(milliseconds) ?? "\(milliseconds) ms"
    }
}

/// What a flush did: what it delivered, what is left and why.
public struct UploadResult: Sendable, Hashable, CustomStringConvertible {
    /// Batches delivered during the flush.
    public var deliveredBatches: Int
    /// Events in them.
    public var deliveredEvents: Int
    /// Batches set aside as rejected during the flush.
    public var rejectedBatches: Int
    /// Sealed batches still waiting in the outbox.
    public var pendingBatches: Int
    /// Events still waiting: in the outbox and in the log.
    public var pendingEvents: Int
    /// Why events are still waiting; nil when everything was delivered (or set aside).
    public var pendingReason: PendingReason?

    /// Creates a result.
    public init(deliveredBatches: Int = 0, deliveredEvents: Int = 0, rejectedBatches: Int = 0, pendingBatches: Int = 0,
                pendingEvents: Int = 0, pendingReason: PendingReason? = nil) {
        self.deliveredBatches = deliveredBatches
        self.deliveredEvents = deliveredEvents
        self.rejectedBatches = rejectedBatches
        self.pendingBatches = pendingBatches
        self.pendingEvents = pendingEvents
        self.pendingReason = pendingReason
    }

    /// Whether nothing is left to send.
    public var isComplete: Bool { pendingReason == nil && pendingEvents == 0 }

    public var description: String {
        var text = "delivered \(deliveredBatches) batches (\(deliveredEvents) events)"
        if rejectedBatches > 0 { text += ", \(rejectedBatches) rejected" }
        if let pendingReason { text += "; \(pendingEvents) events pending: \(pendingReason)" }
        return text
    }
}

/// One request the uploader made and what came of it (``UploadConfiguration/onAttempt``, and the tracker's
/// `Configuration.Upload.onAttempt`): for an app's own upload log, `spoor upload`'s per-batch report, and tests that
/// count requests.
public struct UploadAttempt: Sendable, Hashable {
    /// What was done with the batch.
    public enum Outcome: String, Sendable, Hashable {
        /// 2xx: released.
        case delivered
        /// 2xx with `"duplicate": true`: the collector had stored it before (a lost answer); released.
        case duplicate
        /// 408, 429, 5xx, timeout or network error: kept, retried after the backoff.
        case retryLater
        /// As ``retryLater``, with `Retry-After`: the whole uploader pauses.
        case pausedByServer
        /// 401 or 403: kept; uploads pause.
        case pausedForAuthorization
        /// 413: replaced by two halves.
        case split
        /// Another 4xx, or a single event too large: set aside in the rejected area.
        case setAside
    }

    /// The batch.
    public var batchID: BatchID
    /// Its events.
    public var records: Int
    /// Its frame's size.
    public var bytes: Int
    /// Earlier failed attempts of this batch (the `Spoor-Retry-Count` sent).
    public var retry: Int
    /// The HTTP status, or nil when there was no answer.
    public var status: Int?
    /// The failure: the collector's reason or the client's error.
    public var error: String?
    /// What was done.
    public var outcome: Outcome
}
