/// What the proxy does with one request.
public enum FaultAction: Sendable, Hashable, CustomStringConvertible {
    /// Passes the request to the collector and its answer back to the client.
    case forward
    /// Answers `status` without asking the collector, with these extra headers (`Retry-After`, say).
    case respond(status: Int, headers: [String: String] = [:])
    /// Reads part of the body, then resets the connection (`SO_LINGER` 0): the client sees a network error.
    case resetMidBody
    /// Reads the request, then says nothing for this long (or until the client gives up), then closes.
    case stall(Duration)
    /// Passes the request to the collector, which stores it, then closes the connection without
    /// answering: the client never hears that its batch arrived (the duplicate case).
    case loseResponse

    /// A short name for test output.
    public var description: String {
        switch self {
        case .forward: "forward"
        case .respond(let status, let headers):
            headers.isEmpty ? "respond \(status)" : "respond \(status) \(headers.sorted { $0.key < $1.key })"
        case .resetMidBody: "reset mid-body"
        case .stall(let duration): "stall \(duration)"
        case .loseResponse: "lose response"
        }
    }
}

/// The per-request plan of a ``FaultProxy``: `POST` requests take the next of ``actions`` in turn, then
/// ``then`` for ever; other methods (`GET /healthz`, say) are always forwarded.
public struct FaultScript: Sendable {
    /// The actions for the next `POST` requests, first first.
    public var actions: [FaultAction]
    /// The action once ``actions`` are used up.
    public var then: FaultAction
    /// Bodies larger than this many bytes get `413` (before any scripted action), like a gateway with
    /// a body limit. `nil`: no limit.
    public var rejectBodiesAbove: Int?

    /// Creates a script.
    public init(_ actions: [FaultAction] = [], then: FaultAction = .forward, rejectBodiesAbove: Int? = nil) {
        self.actions = actions
        self.then = then
        self.rejectBodiesAbove = rejectBodiesAbove
    }

    /// Every request forwarded.
    public static let passThrough = FaultScript()
}

/// One request as the proxy saw it, recorded when the proxy has done its part: for ``FaultAction/forward``
/// and ``FaultAction/loseResponse`` when the collector answered, for a stall when it began.
public struct ProxiedRequest: Sendable, CustomStringConvertible {
    /// Its position among all requests the proxy received, from 0.
    public let index: Int
    /// When its head arrived, on the continuous clock.
    public let receivedAt: ContinuousClock.Instant
    /// `POST`, `GET`, ...
    public let method: String
    /// The request target, such as `/v1/batch`.
    public let path: String
    /// The request headers, names lowercased.
    public let headers: [String: String]
    /// The body bytes the proxy read (all of them, but for a reset mid-body).
    public let bodyBytes: Int
    /// What the proxy did.
    public let action: FaultAction
    /// The collector's status, when the request reached it; `nil` when it was not forwarded or the
    /// collector could not be reached (the client then got `502`).
    public let upstreamStatus: Int?

    /// The `Spoor-Batch-Id` header.
    public var batchID: String? { headers["spoor-batch-id"] }
    /// The `Spoor-Retry-Count` header as a number (absent on a first attempt).
    public var retryCount: Int? { headers["spoor-retry-count"].flatMap { Int($0) } }

    /// One line for test output.
    public var description: String {
        "#\(index) \(method) \(path) \(bodyBytes) B batch=\(batchID ?? "-") retry=\(retryCount.map(String.init) ?? "-") "
            + "\(action) upstream=\(upstreamStatus.map(String.init) ?? "-")"
    }
}
