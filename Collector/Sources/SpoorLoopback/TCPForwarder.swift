import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port on 127.0.0.1 that passes each connection through to another port, which may change: a server that
/// restarts on a port of its own choosing keeps, through this, the address its clients were given. (A port bound,
/// closed and handed to a server later may meanwhile be taken by anyone; this one stays ours until ``stop()``.)
///
/// While there is no upstream (the server is down), or it refuses, a connection is accepted and closed at once: to a
/// client that is a server that went away. Bytes are copied as they come, both ways, by two threads per connection;
/// when either side ends its connection, or goes away, the other side's ends too.
///
/// Its threads hold it: call ``stop()`` when done.
package final class TCPForwarder: Sendable {
    /// The port clients connect to.
    package let port: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var upstreamPort: Int?
        var sockets: Set<Int32> = []
        var stopped = false
    }

    /// Listens on a port of the kernel's choice, passing connections to `upstreamPort` (none yet: nil).
    package init(upstreamPort: Int? = nil) throws(LoopbackError) {
        (listener, port) = try listenOnLoopback(port: 0)
        state.withLock { $0.upstreamPort = upstreamPort }
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "tcp-forwarder \(port)"
        thread.start()
    }

    /// Where new connections go; nil while the server is down. Connections already passed on stay as they are.
    package var upstreamPort: Int? {
        get { state.withLock { $0.upstreamPort } }
        set { state.withLock { $0.upstreamPort = newValue } }
    }

    /// Stops listening and ends every connection. Safe to call twice.
    package func stop() {
        let sockets = state.withLock { state -> Set<Int32>? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.sockets
        }
        guard let sockets else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let client = HTTPConnection(fd: fd)
            guard let upstreamPort = register(fd), let upstream = try? HTTPConnection(connectingTo: upstreamPort),
                  register(upstream.fd) != nil else {
                forget(fd)
                client.close()
                continue
            }
            let pair = Pair(client, upstream, forwarder: self)
            for upstreamward in [true, false] {
                let thread = Thread { pair.copy(upstreamward: upstreamward) }
                thread.name = "tcp-forwarder \(port) connection"
                thread.start()
            }
        }
    }

    /// Records an open socket, so ``stop()`` can end it; returns the upstream port then (nil once stopped, or while
    /// there is no upstream).
    fileprivate func register(_ fd: Int32) -> Int? {
        state.withLock { state in
            guard !state.stopped, let port = state.upstreamPort else { return nil }
            state.sockets.insert(fd)
            return port
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
    private let ended = Mutex(0)

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
