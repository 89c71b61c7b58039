public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// One HTTP request the uploader makes: a POST of one batch frame.
public struct HTTPRequest: Sendable, Hashable {
    /// Where the request goes.
    public var url: URL
    /// The method; the uploader always uses `POST`.
    public var method: String
    /// Header fields, in the order they are sent.
    public var headers: [(name: String, value: String)]
    /// The body: one batch frame.
    public var body: [UInt8]
    /// How long the whole request may take before it counts as failed.
    public var timeout: Duration

    /// Creates a request.
    public init(url: URL, method: String = "POST", headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                timeout: Duration = .seconds(30)) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The value of the header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.url == b.url && a.method == b.method && a.body == b.body && a.timeout == b.timeout
            && a.headers.elementsEqual(b.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(method)
        hasher.combine(body)
    }
}

/// The answer to an ``HTTPRequest``.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The body (the collector answers with a short JSON document).
    public var body: [UInt8]

    /// Creates a response; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    /// The value of the header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a request got no HTTP answer: these outcomes are retried like a 5xx.
public struct HTTPClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// The request took longer than its timeout.
        public static let timedOut = Kind(name: "timedOut")
        /// No connection, a reset, a DNS failure: the network or the server is not there.
        public static let network = Kind(name: "network")
        /// The request was cancelled (the uploader is stopping).
        public static let cancelled = Kind(name: "cancelled")
        public var description: String { name }
    }

    /// What went wrong.
    public var kind: Kind
    /// A human-readable explanation.
    public var reason: String

    /// Creates an error.
    public init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "\(kind): \(reason)" }
}

/// What the uploader sends requests through. ``URLSessionHTTPClient`` is the default; a server host can bring its
/// own client (an `AsyncHTTPClient` wrapper, a proxy-aware one), and tests script outcomes.
///
/// `send` returns any HTTP answer, whatever its status; it throws only when there is none (throw
/// ``HTTPClientError`` to say which kind; any other error counts as a network failure). It should give up after
/// ``HTTPRequest/timeout`` and honour task cancellation; the uploader also stops waiting at the timeout whatever
/// the client does.
public protocol HTTPTransportClient: Sendable {
    /// Sends `request` and returns the answer.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// An ``HTTPTransportClient`` over Foundation's `URLSession` (FoundationNetworking on Linux).
public struct URLSessionHTTPClient: HTTPTransportClient, @unchecked Sendable {
    // @unchecked: URLSession is thread-safe but not marked Sendable in FoundationNetworking.
    private let session: URLSession

    /// Creates a client with its own ephemeral session (no cookies, no cache).
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    /// Creates a client over an existing session.
    public init(session: URLSession) {
        self.session = session
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        let (seconds, attoseconds) = request.timeout.components
        // The uploader's own timer holds the exact bound and cancels the request; this is a backstop, set 5 s later.
        // Two reasons: FoundationNetworking (Linux) truncates it to whole seconds (0.5 s would time out at once), and
        // a cancel that meets FoundationNetworking's own timeout failing the same task can deadlock inside it (seen
        // in the kill-rounds test: `URLSessionTask.cancel` waiting on a queue whose failure callback waits on a lock).
        urlRequest.timeoutInterval = (Double(seconds) + Double(attoseconds) / 1e18).rounded(.up) + 5
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.upload(for: urlRequest, from: Data(request.body))
        } catch let error as URLError where error.code == .timedOut {
            throw HTTPClientError(.timedOut, reason: error.localizedDescription)
        } catch let error as URLError where error.code == .cancelled {
            throw HTTPClientError(.cancelled, reason: error.localizedDescription)
        } catch is CancellationError {
            throw HTTPClientError(.cancelled, reason: "the task was cancelled")
        } catch let error as URLError {
            // The message alone ("Failed to connect to 127.0.0.1 port 8080 after 0 ms: Couldn't connect to
            // server") and the code; the whole userInfo dump would fill every log line with the URL twice.
            throw HTTPClientError(.network, reason: "\(error.localizedDescription) (URLError \(error.code.rawValue))")
        } catch {
            throw HTTPClientError(.network, reason: "\(error)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw HTTPClientError(.network, reason: "the answer is not HTTP")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
        return HTTPResponse(status: http.statusCode, headers: headers, body: Array(data))
    }
}
