public import SpoorUpload
import SpoorSystem

/// An `HTTPTransportClient` that plays a script: each request gets the next step, then `otherwise` forever.
/// It records every request, so tests check headers, order and that no request is made in a busy loop.
public final class ScriptedHTTPClient: HTTPTransportClient, Sendable {
    /// What one request gets.
    public enum Step: Sendable {
        /// An answer with this status, headers and body.
        case respond(Int, headers: [String: String] = [:], body: String = "")
        /// No answer: the client throws this error.
        case fail(HTTPClientError)
        /// No answer until the request is cancelled (a stalled server).
        case stall
        /// The answer `handler` makes from the request.
        case handle(@Sendable (HTTPRequest) -> HTTPResponse)
    }

    private struct State {
        var script: [Step]
        var recorded: [HTTPRequest] = []
        var inFlight = 0
        var maxInFlight = 0
    }

    private let state: Locked<State>
    private let otherwise: Step
    private let watchers = ConditionWatchers()

    /// Creates a client playing `script`, then `otherwise` (default: `200`).
    public init(_ script: [Step] = [], otherwise: Step = .respond(200, body: #"{"stored":true}"#)) {
        state = Locked(State(script: script))
        self.otherwise = otherwise
    }

    /// Every request received, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.recorded } }
    /// The most requests in flight at once.
    public var maxConcurrentRequests: Int { state.withLock { $0.maxInFlight } }

    /// Appends steps to the script.
    public func append(_ steps: [Step]) { state.withLock { $0.script += steps } }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let step = state.withLock { s -> Step in
            s.recorded.append(request)
            s.inFlight += 1
            s.maxInFlight = max(s.maxInFlight, s.inFlight)
            return s.script.isEmpty ? otherwise : s.script.removeFirst()
        }
        watchers.check()
        defer { state.withLock { $0.inFlight -= 1 } }
        switch step {
        case .respond(let status, let headers, let body):
            return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
        case .fail(let error):
            throw error
        case .stall:
            while true { try await Task.sleep(for: .seconds(3600)) }
        case .handle(let handler):
            return handler(request)
        }
    }

    /// Waits until at least `count` requests were received; false after `timeout` of real time.
    public func requests(atLeast count: Int, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in requests.count >= count }
    }
}
