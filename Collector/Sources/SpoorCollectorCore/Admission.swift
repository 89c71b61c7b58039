import Metrics
import SpoorSystem

/// The collector's in-flight budget: how many batches it handles at once, and how many bytes all requests may hold.
///
/// Bytes are reserved before they are spent: a body's bytes as they arrive (so a client that trickles its body holds
/// only what it sent), then, once the body is whole, what handling it may hold (``Ingest/memoryCharge(for:)``:
/// the body, the payload its frame declares and the row text that may become). A batch takes a slot only while it is
/// handled, not while its body arrives. Whatever does not fit is answered 503 with `Retry-After`, at once.
public final class Admission: Sendable {
    /// The most batches handled at once.
    public let maxRequests: Int
    /// The most bytes all requests may hold at once.
    public let maxBytes: Int

    private struct State {
        var requests = 0
        var bytes = 0
    }

    private let state = Locked(State())
    private let requestsGauge = Gauge(label: "spoor_collector_batches_in_flight")
    private let bytesGauge = Gauge(label: "spoor_collector_bytes_in_flight")

    /// A budget of `maxRequests` batches and `maxBytes` bytes.
    public init(maxRequests: Int, maxBytes: Int) {
        self.maxRequests = maxRequests
        self.maxBytes = maxBytes
    }

    /// Reserves `bytes` (a body's bytes as they arrive); false, reserving nothing, when they do not fit.
    public func reserve(bytes: Int) -> Bool {
        state.withLock { state in
            guard bytes <= maxBytes - state.bytes else { return false }
            state.bytes += bytes
            bytesGauge.record(state.bytes)
            return true
        }
    }

    /// Gives back `bytes` reserved before.
    public func release(bytes: Int) {
        state.withLock { state in
            state.bytes -= bytes
            bytesGauge.record(state.bytes)
        }
    }

    /// Takes a slot and `bytes` more for a batch about to be handled; false, taking nothing, when either is used up.
    public func admit(bytes: Int) -> Bool {
        state.withLock { state in
            guard state.requests < maxRequests, bytes <= maxBytes - state.bytes else { return false }
            state.requests += 1
            state.bytes += bytes
            requestsGauge.record(state.requests)
            bytesGauge.record(state.bytes)
            return true
        }
    }

    /// Gives back a slot and the `bytes` taken with it.
    public func finish(bytes: Int) {
        state.withLock { state in
            state.requests -= 1
            state.bytes -= bytes
            requestsGauge.record(state.requests)
            bytesGauge.record(state.bytes)
        }
    }

    /// The batches being handled and the bytes held now.
    public var current: (requests: Int, bytes: Int) {
        state.withLock { ($0.requests, $0.bytes) }
    }
}
