import Foundation
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port on 127.0.0.1 that passes each connection through to another port, which may change: a server that
/// restarts on a port of its own choosing keeps, through this, the address its clients were given. (A port bound,
/// closed and handed to a server later may meanwhile be taken by anyone; this one stays ours until ``stop()``.)
///
/// What a connection meets depends on ``upstream``: while it is ``Upstream/starting`` (the server is on its way and
/// has not said where it listens) the connection is held, as by a server still starting, and passed on once it
/// has; while ``Upstream/down`` (or when the server refuses) it is closed at once, as by a server that went away.
/// Bytes are copied as they come, both ways, by two threads per connection; when either side ends its connection,
/// or goes away, the other side's ends too.
///
/// Its threads hold it: call ``stop()`` when done.
package final class TCPForwarder: Sendable {
    /// Where connections go.
    package enum Upstream: Sendable, Equatable {
        /// The server is starting: connections wait.
        case starting
        /// The server listens on this port of 127.0.0.1.
        case port(Int)
        /// The server is down: connections are closed.
        case down
    }

    /// The port clients connect to.
    package let port: Int
    private let listener: Int32
    private let state = Locked(State())

    private struct State {
        var upstream = Upstream.starting
        /// Accepted connections waiting for the server to start.
        var held: [Int32] = []
        var sockets: Set<Int32> = []
        var stopped = false
    }

    /// Listens on a port of the kernel's choice, holding connections until ``upstream`` says where they go.
    package init() throws(LoopbackError) {
        (listener, port) = try listenOnLoopback(port: 0)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "tcp-forwarder \(port)"
        thread.start()
    }

    /// Where new connections go (and those held, once it is a port or down). Connections already passed on stay.
    package var upstream: Upstream {
        get { state.withLock { $0.upstream } }
        set {
            let held = state.withLock { state in
                state.upstream = newValue
                guard newValue != .starting else { return [Int32]() }
                defer { state.held = [] }
                return state.held
            }
            for fd in held { pass(fd, to: newValue) }
        }
    }

    /// Stops listening and ends every connection. Safe to call twice.
    package func stop() {
        let (sockets, held) = state.withLock { state -> (Set<Int32>, [Int32]) in
            guard !state.stopped else { return ([], []) }
            state.stopped = true
            defer { state.held = [] }
            return (state.sockets, state.held)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        for fd in held { close(fd) }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let upstream = state.withLock { state -> Upstream? in
                guard !state.stopped else { return nil }
                state.sockets.insert(fd)
                if state.upstream == .starting { state.held.append(fd) }
                return state.upstream
            }
            guard let upstream else {
                close(fd)
                return
            }
            if upstream != .starting { pass(fd, to: upstream) }
        }
    }

    /// Connects an accepted client to `upstream` and starts copying; closes it when there is nowhere to go.
    private func pass(_ fd: Int32, to upstream: Upstream) {
        let client = HTTPConnection(fd: fd)
        guard case .port(let port) = upstream, let server = try? HTTPConnection(connectingTo: port), track(server.fd) else {
            forget(fd)
            client.close()
            return
        }
        let pair = Pair(client, server, forwarder: self)
        for upstreamward in [true, false] {
            let thread = Thread { pair.copy(upstreamward: upstreamward) }
            thread.name = "tcp-forwarder \(self.port) connection"
            thread.start()
        }
    }

    /// Records an open socket, so ``stop()`` can end it; false once stopped.
    private func track(_ fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.sockets.insert(fd)
            return true
        }
    }

    fileprivate func forget(_ fd: Int32) {
        _ = state.withLock { $0.sockets.remove(fd) }
    }
}

/// One connection passed through: closed when both directions have ended.
private final class Pair: @unchecked Sendable {
    // Unchecked: the connections' buffers are each read by one thread only (their `from` side), and `ended` is
    // guarded by its mutex.
    private let first: HTTPConnection
    private let second: HTTPConnection
    private let forwarder: TCPForwarder
    private let ended = Locked(0)

    init(_ first: HTTPConnection, _ second: HTTPConnection, forwarder: TCPForwarder) {
        self.first = first
        self.second = second
        self.forwarder = forwarder
    }

    /// Copies what the client sends to the server (`upstreamward`), or back, until the sender ends or the receiver
    /// goes away; then ends both, which wakes the thread copying the other way.
    func copy(upstreamward: Bool) {
        let (from, to) = upstreamward ? (first, second) : (second, first)
        while let bytes = try? from.read(upTo: 64 << 10), to.write(bytes) {}
        from.shutDown()
        to.shutDown()
        let both = ended.withLock { count in
            count += 1
            return count == 2
        }
        guard both else { return }
        for connection in [first, second] {
            forwarder.forget(connection.fd)
            connection.close()
        }
    }
}
