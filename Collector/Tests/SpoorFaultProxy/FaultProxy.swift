public import Foundation
import SpoorCollectorCore
import SpoorLoopback
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of the proxy itself (it could not listen, or a wait ran out).
public struct FaultProxyError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// An HTTP/1.1 proxy on 127.0.0.1 that sits in front of a real `spoor-collector` and does to each request
/// what its ``FaultScript`` says: forward it, answer a status itself, reset the connection mid-body,
/// stall, or forward it and lose the answer. It records every request (``requests``), so a test can count
/// them, read their `Spoor-Batch-Id` and `Spoor-Retry-Count`, and await a number of them.
///
/// One thread per connection, blocking sockets: a test tool for a handful of connections, not a server.
/// When nothing listens at ``upstreamPort`` (a collector being restarted) a forwarded request gets `502`.
///
/// ```swift
/// let proxy = try FaultProxy(upstreamPort: collector.port, script: FaultScript([.respond(status: 503,
///     headers: ["Retry-After": "1"]), .loseResponse]))
/// // point the client at http://127.0.0.1:\(proxy.port)/v1/batch
/// let seen = try await proxy.waitForRequests(3)
/// ```
public final class FaultProxy: Sendable {
    /// The port the proxy listens on.
    public let port: Int
    private let listener: Int32
    private let state: Locked<State>
    /// Fulfilled by ``stop()``; stalls wait on it, so stopping ends them at once.
    private let stopped = Promise<Void>()

    private struct Waiter {
        var id: Int
        var count: Int
        var continuation: CheckedContinuation<[ProxiedRequest], any Error>
    }

    private struct State {
        var script: FaultScript
        var upstreamPort: Int?
        var nextIndex = 0
        var requests: [ProxiedRequest] = []
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        var openSockets: Set<Int32> = []
        var stopped = false
    }

    /// Starts listening on 127.0.0.1 (`port` 0 picks a free port) in front of the collector at `upstreamPort`.
    public init(upstreamPort: Int?, script: FaultScript = .passThrough, port: Int = 0) throws(FaultProxyError) {
        let (fd, actualPort): (Int32, Int)
        do {
            (fd, actualPort) = try listenOnLoopback(port: port)
        } catch {
            throw FaultProxyError("the proxy cannot listen: \(error)")
        }
        listener = fd
        self.port = actualPort
        state = Locked(State(script: script, upstreamPort: upstreamPort))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "fault-proxy-accept"
        thread.start()
    }

    deinit { stop() }

    /// The URL of the collector's batch endpoint through the proxy.
    public var batchURL: URL { URL(string: "http://127.0.0.1:\(port)/v1/batch")! }

    /// The collector's port; set it when the collector restarts on another port, `nil` while it is down.
    public var upstreamPort: Int? {
        get { state.withLock { $0.upstreamPort } }
        set { state.withLock { $0.upstreamPort = newValue } }
    }

    /// Replaces the script; the next `POST` takes the new script's first action.
    public func setScript(_ script: FaultScript) {
        state.withLock { $0.script = script }
    }

    /// Every request so far, in arrival order of their recording.
    public var requests: [ProxiedRequest] { state.withLock { $0.requests } }

    /// Waits until at least `count` requests are recorded and returns them all; throws after `timeout` (minutes by
    /// default: a bound for a hang).
    package func waitForRequests(_ count: Int, timeout: Duration = waitBound) async throws -> [ProxiedRequest] {
        do {
            return try await withDeadline(timeout) { try await self.requests(atLeast: count) }
        } catch is DeadlineExceeded {
            throw FaultProxyError("fewer than \(count) requests after \(timeout): \(requests)")
        }
    }

    /// Every request once at least `count` are recorded; throws when cancelled or when the proxy stops first.
    private func requests(atLeast count: Int) async throws -> [ProxiedRequest] {
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Decided under the lock that `onCancel` and `stop()` take, so no waiter is left behind.
                let outcome: Result<[ProxiedRequest], any Error>? = state.withLock { state in
                    if state.requests.count >= count { return .success(state.requests) }
                    if state.stopped { return .failure(FaultProxyError("the proxy stopped")) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Stops listening, drops every connection and ends every stall. Safe to call twice.
    public func stop() {
        let (sockets, waiters, wasStopped) = state.withLock { state in
            defer {
                state.stopped = true
                state.waiters = []
            }
            return (state.openSockets, state.waiters, state.stopped)
        }
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        stopped.fulfil(())
        for waiter in waiters { waiter.continuation.resume(throwing: FaultProxyError("the proxy stopped")) }
    }

    // MARK: Connections

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR, !isStopped { continue }
                return
            }
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.openSockets.insert(fd)
                return true
            }
            guard accepted else {
                close(fd)
                return
            }
            let thread = Thread { [self] in serve(HTTPConnection(fd: fd)) }
            thread.name = "fault-proxy-connection"
            thread.start()
        }
    }

    /// Serves the requests of one client connection until it closes or an action ends it.
    private func serve(_ client: HTTPConnection) {
        var closed = false
        defer {
            if !closed {
                state.withLock { _ = $0.openSockets.remove(client.fd) }
                client.close()
            }
        }
        while true {
            guard let head = try? client.readHead() else { return }
            let receivedAt = ContinuousClock.now
            let parts = head.firstLine.split(separator: " ")
            guard parts.count >= 2 else { return }
            let method = String(parts[0])
            let path = String(parts[1])
            let headers = head.dictionary
            if headers["expect"]?.lowercased() == "100-continue" {
                client.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            }
            let declaredLength = headers["content-length"].flatMap { Int($0) }
            let (index, scripted) = decide(method: method, declaredLength: declaredLength)
            func record(_ bodyBytes: Int, _ action: FaultAction, upstream: Int? = nil) {
                self.record(ProxiedRequest(
                    index: index, receivedAt: receivedAt, method: method, path: path, headers: headers,
                    bodyBytes: bodyBytes, action: action, upstreamStatus: upstream))
            }

            if scripted == .resetMidBody {
                // Take some of the body so the client is mid-send, then reset.
                let partial = (try? client.read(upTo: max(1, (declaredLength ?? 2) / 2))) ?? []
                record(partial.count, .resetMidBody)
                // Forgotten before it is closed, so `stop()` never shuts down a reused descriptor number.
                state.withLock { _ = $0.openSockets.remove(client.fd) }
                closed = true
                client.reset()
                return
            }
            guard let body = try? client.readBody(headers: headers, untilClose: false) else { return }
            var action = scripted
            if method == "POST", let limit = state.withLock({ $0.script.rejectBodiesAbove }), body.count > limit {
                action = .respond(status: 413)
            }
            switch action {
            case .forward, .loseResponse:
                let answer = forward(head: head, body: body)
                record(body.count, action, upstream: answer?.status)
                if action == .loseResponse { return }
                guard client.write(answer?.bytes ?? Self.response(status: 502, headers: [:])) else { return }
            case .respond(let status, let extra):
                record(body.count, action)
                guard client.write(Self.response(status: status, headers: extra)) else { return }
            case .stall(let duration):
                record(body.count, action)
                stall(for: duration)
                return
            case .resetMidBody:
                return
            }
            if headers["connection"]?.lowercased() == "close" { return }
        }
    }

    /// Takes the next action for a request.
    private func decide(method: String, declaredLength: Int?) -> (index: Int, action: FaultAction) {
        state.withLock { state in
            let index = state.nextIndex
            state.nextIndex += 1
            guard method == "POST" else { return (index, .forward) }
            if let limit = state.script.rejectBodiesAbove, let declaredLength, declaredLength > limit {
                return (index, .respond(status: 413))
            }
            if state.script.actions.isEmpty { return (index, state.script.then) }
            return (index, state.script.actions.removeFirst())
        }
    }

    private func record(_ request: ProxiedRequest) {
        let ready = state.withLock { state -> [(CheckedContinuation<[ProxiedRequest], any Error>, [ProxiedRequest])] in
            state.requests.append(request)
            let count = state.requests.count
            let done = state.waiters.filter { $0.count <= count }
            state.waiters.removeAll { $0.count <= count }
            return done.map { ($0.continuation, state.requests) }
        }
        for (continuation, requests) in ready { continuation.resume(returning: requests) }
    }

    /// Holds the connection's thread for `duration`, or until the proxy stops.
    private func stall(for duration: Duration) {
        _ = stopped.wait(timeout: duration)
    }

    /// Sends the request to the collector on a fresh connection; returns its status and the response
    /// to relay, or `nil` when it could not be reached or did not answer.
    private func forward(head: MessageHead, body: [UInt8]) -> (status: Int, bytes: [UInt8])? {
        guard let port = upstreamPort, let upstream = try? HTTPConnection(connectingTo: port) else { return nil }
        let registered = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.openSockets.insert(upstream.fd)
            return true
        }
        defer {
            state.withLock { _ = $0.openSockets.remove(upstream.fd) }
            upstream.close()
        }
        guard registered else { return nil }
        let hopByHop: Set<String> = ["connection", "keep-alive", "expect", "transfer-encoding", "content-length"]
        let request = head.serialized(dropping: hopByHop, adding: [("content-length", "\(body.count)"), ("connection", "close")])
        guard upstream.write(request + body), let response = try? upstream.readResponse() else { return nil }
        let relayed = response.head.serialized(dropping: hopByHop, adding: [("content-length", "\(response.body.count)")])
        return (response.status, relayed + response.body)
    }

    /// A response the proxy makes up: the status, the extra headers and a small JSON body.
    static func response(status: Int, headers: [String: String]) -> [UInt8] {
        let body = Array(#"{"error":"fault_proxy","status":\#(status)}"#.utf8)
        let head = MessageHead(
            firstLine: "HTTP/1.1 \(status) \(reason(status))",
            fields: headers.sorted { $0.key < $1.key }.map { ($0.key.lowercased(), $0.value) }
                + [("content-type", "application/json"), ("content-length", "\(body.count)")]
        )
        return head.serialized() + body
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
