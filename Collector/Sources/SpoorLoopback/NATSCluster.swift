package import Foundation
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A throwaway NATS JetStream cluster on 127.0.0.1: `nats-server` processes with `-js`, each with its own
/// temporary store directory, routed to one another (or one server alone). For the tests and the load tool; nodes
/// can be killed and started again over their store.
///
/// Every server listens on ports it chooses itself (`-1`) and says which in its log; nothing binds a port, lets it
/// go, and hopes no one took it meanwhile. The servers of a cluster find one another through a ``TCPForwarder``
/// per node, which keeps a node's route address when it restarts on new ports (each server advertises its
/// forwarder's address), and holds the connections made to a node that is still starting: closing them instead
/// was seen to leave a server that never learnt the metadata leader. With `restartable`, clients reach the nodes through forwarders too, so the URL given to
/// collectors stays right across restarts; without (the load tool, which never restarts a node), clients connect
/// to the servers themselves.
///
/// Creating it fails (never skips) when `nats-server` is missing or the cluster does not elect a metadata leader
/// in time. Stop it with ``stop()``; a cluster released without that is killed on the spot.
package final class NATSCluster: Sendable {
    /// One server: its name and store directory.
    package struct Node: Sendable {
        package var name: String
        package var directory: URL
    }

    package let nodes: [Node]
    private let root: URL
    private let binary: URL
    /// Each node's route forwarder (a cluster of one has none).
    private let routes: [TCPForwarder]
    /// Each node's client forwarder, when restartable.
    private let clients: [TCPForwarder]
    private let state: Locked<State>

    private struct State {
        var processes: [LineProcess?]
        /// The client port each node's server chose, the last time it started.
        var clientPorts: [Int?]
    }

    /// Starts `size` nodes and waits, at most `timeout`, until each knows the cluster's metadata leader.
    package init(size: Int = 3, restartable: Bool = false, timeout: Duration = waitBound) async throws(LoopbackError) {
        guard let binary = Self.findServer() else {
            throw LoopbackError("nats-server is not installed (scripts/bootstrap installs it)")
        }
        self.binary = binary
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-nats-\(UUID().uuidString)")
        self.root = root
        nodes = (0..<size).map { Node(name: "n\($0 + 1)", directory: root.appendingPathComponent("n\($0 + 1)")) }
        var routes: [TCPForwarder] = []
        var clients: [TCPForwarder] = []
        do {
            for _ in 0..<(size > 1 ? size : 0) { routes.append(try TCPForwarder()) }
            for _ in 0..<(restartable ? size : 0) { clients.append(try TCPForwarder()) }
        } catch {
            for forwarder in routes + clients { forwarder.stop() }
            throw error
        }
        self.routes = routes
        self.clients = clients
        state = Locked(State(processes: Array(repeating: nil, count: size), clientPorts: Array(repeating: nil, count: size)))
        do {
            // All at once: each finds the others through their forwarders, which follow the servers' logs.
            for index in nodes.indices { _ = try launch(index) }
            try await settle(Array(nodes.indices), timeout: timeout)
        } catch {
            await stop()
            throw error
        }
    }

    /// Kills whatever still runs (a test that failed on the way); nothing waits.
    deinit {
        for forwarder in routes + clients { forwarder.stop() }
        let processes = state.withLock { $0.processes }
        for process in processes { process?.signal(SIGKILL) }
    }

    /// `nats://HOST:PORT,…/STREAM` over every node, as clients reach them now (for a restartable cluster, for good).
    package func url(stream: String) -> String {
        let ports = clients.isEmpty ? state.withLock { $0.clientPorts.compactMap { $0 } } : clients.map(\.port)
        return "nats://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/" + stream
    }

    /// The node that leads `stream`'s replicas, from the servers' logs; nil until one said so.
    package func streamLeader(_ stream: String) -> Int? {
        state.withLock { state in
            state.processes.indices.last { index in
                state.processes[index]?.errors.contains { $0.contains(Self.leaderLine(stream)) } ?? false
            }
        }
    }

    /// How many log lines each running node has written so far (nil for a node that is down): a mark to await
    /// later lines from, with ``newStreamLeader(_:after:timeout:)``.
    package func logMarks() -> [Int?] {
        state.withLock { $0.processes.map { $0?.lineCount(.errors) } }
    }

    /// Waits, at most `timeout`, until a node that runs now logs, after `marks`, that it leads `stream`'s replicas
    /// (an election after a leader went away); returns that node.
    package func newStreamLeader(_ stream: String, after marks: [Int?], timeout: Duration = waitBound) async throws -> Int {
        let running = state.withLock { state in
            state.processes.indices.compactMap { index in state.processes[index].map { (index, $0) } }
        }
        let line = Self.leaderLine(stream)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, process) in running {
                let start = marks.indices.contains(index) ? marks[index] ?? 0 : 0
                group.addTask {
                    _ = try await process.line(.errors, from: start, timeout: timeout) { $0.contains(line) }
                    return index
                }
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw LoopbackError("no node runs") }
            return first
        }
    }

    /// Kills node `index` with SIGKILL (its store stays) and waits for it to exit.
    package func kill(_ index: Int) async throws {
        if !clients.isEmpty { clients[index].upstream = .down }
        if !routes.isEmpty { routes[index].upstream = .down }
        let process = state.withLock { state in
            defer {
                state.processes[index] = nil
                state.clientPorts[index] = nil
            }
            return state.processes[index]
        }
        try await process?.stop(signal: SIGKILL)
    }

    /// Starts node `index` again over its store (on new ports, behind the same forwarders) and waits, at most
    /// `timeout`, until it knows the metadata leader.
    package func start(_ index: Int, timeout: Duration = waitBound) async throws {
        // Connections wait while it starts, as they would for a server that has not begun to answer.
        if !clients.isEmpty { clients[index].upstream = .starting }
        if !routes.isEmpty { routes[index].upstream = .starting }
        _ = try launch(index)
        try await settle([index], timeout: timeout)
    }

    /// Stops every node (SIGTERM), waits for them, and removes the store directories.
    package func stop() async {
        let running = state.withLock { state in
            defer { state.processes = state.processes.map { _ in nil } }
            return state.processes.compactMap { $0 }
        }
        for forwarder in routes + clients { forwarder.stop() }
        for process in running {
            if (try? await process.stop()) == nil { _ = try? await process.stop(signal: SIGKILL) }
        }
        try? FileManager.default.removeItem(at: root)
    }

    private static func leaderLine(_ stream: String) -> String { "new stream leader for '$G > \(stream)'" }

    private func launch(_ index: Int) throws(LoopbackError) -> LineProcess {
        let node = nodes[index]
        do {
            try FileManager.default.createDirectory(at: node.directory, withIntermediateDirectories: true)
        } catch {
            throw LoopbackError("cannot create \(node.directory.path): \(error)")
        }
        var arguments = ["-js", "-sd", node.directory.path, "-a", "127.0.0.1", "-p", "-1", "-n", node.name]
        if !clients.isEmpty { arguments += ["--client_advertise", "127.0.0.1:\(clients[index].port)"] }
        if !routes.isEmpty {
            // A ring: each node solicits the next, so each pair of nodes is routed once. (Two nodes soliciting each
            // other at once were seen to close both routes, and a node that lost all of them while JetStream started
            // never learnt the metadata leader.) The others it learns from the cluster.
            let next = (index + 1) % routes.count
            arguments += [
                "--cluster_name", "spoor", "--cluster", "nats://127.0.0.1:-1",
                "--cluster_advertise", "127.0.0.1:\(routes[index].port)",
                "--routes", "nats://127.0.0.1:\(routes[next].port)",
            ]
        }
        // The forwarders follow the server's log on the reading thread: its peers' routes wait in them until it says
        // where it listens, and must not wait longer for a task of this process to get a thread (that was seen to
        // take seconds in a busy test run, and a node whose routes came that late never learnt the metadata leader).
        let client = clients.isEmpty ? nil : clients[index]
        let route = routes.isEmpty ? nil : routes[index]
        let process = try LineProcess(binary, arguments) { stream, line in
            guard stream == .errors else { return }
            if let port = Self.port(in: line, after: Self.clientLine) { client?.upstream = .port(port) }
            if let port = Self.port(in: line, after: Self.routeLine) { route?.upstream = .port(port) }
        }
        state.withLock { $0.processes[index] = process }
        return process
    }

    /// Waits, at most `timeout` in all, until each of the nodes `indices` said where it listens (its forwarders
    /// follow on their own) and logged the metadata leader (itself or another), so the cluster can serve JetStream;
    /// a single server serves JetStream once it is ready.
    ///
    /// A node of a cluster that has said nothing of a leader ``restartAfter`` after it started is started again
    /// over its store. nats-server 2.9 was seen to leave a node without the metadata leader for good when its
    /// routes came and went while the cluster first formed (with several clusters starting at once on a busy
    /// machine: one node in four); started again, such a node joins. It is a way past a server's flaw, not a wait
    /// on time: a node that was only slow joins all the same after its restart.
    private func settle(_ indices: [Int], timeout: Duration) async throws(LoopbackError) {
        let deadline = ContinuousClock.now + timeout
        var waiting = indices
        var restarts = 0
        while !waiting.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw timedOut(waiting, after: timeout) }
            let processes = state.withLock { state in waiting.map { (index: $0, process: state.processes[$0]) } }
            let single = nodes.count == 1
            let limit = single ? left : min(left, Self.restartAfter)
            let stuck = await withTaskGroup(of: Int?.self) { group in
                for (index, process) in processes {
                    group.addTask { [self] in
                        guard let process else { return index }
                        do {
                            let (_, line) = try await process.line(.errors, timeout: limit) { $0.contains(Self.clientLine) }
                            state.withLock { $0.clientPorts[index] = Self.port(in: line, after: Self.clientLine) }
                            _ = try await process.line(.errors, timeout: limit) { line in
                                single ? line.contains("Server is ready")
                                    : line.contains("JetStream cluster metadata leader") || line.contains("new metadata leader")
                            }
                            return nil
                        } catch {
                            return index
                        }
                    }
                }
                return await group.reduce(into: [Int]()) { stuck, index in if let index { stuck.append(index) } }
            }
            waiting = stuck.sorted()
            guard !waiting.isEmpty, !single, restarts < Self.maxRestarts else { continue }
            restarts += 1
            for index in waiting {
                do {
                    try await kill(index)
                } catch {
                    throw LoopbackError("nats-server \(nodes[index].name) did not stop: \(error)")
                }
                if !clients.isEmpty { clients[index].upstream = .starting }
                routes[index].upstream = .starting
                _ = try launch(index)
            }
        }
    }

    /// How long a node may stay without the metadata leader before it is started again (``settle(_:timeout:)``).
    private static let restartAfter: Duration = .seconds(20)
    private static let maxRestarts = 5

    private func timedOut(_ indices: [Int], after timeout: Duration) -> LoopbackError {
        let logs = state.withLock { state in indices.map { state.processes[$0].map(Self.tail) ?? "(not running)" } }
        let names = indices.map { nodes[$0].name }.joined(separator: ", ")
        return LoopbackError("nats-server \(names) did not join a JetStream cluster within \(timeout):\n" + logs.joined(separator: "\n---\n"))
    }

    /// The last lines of a server's log, for failure messages.
    private static func tail(_ process: LineProcess) -> String {
        process.errors.suffix(15).joined(separator: "\n")
    }

    private static let clientLine = "Listening for client connections on 127.0.0.1:"
    private static let routeLine = "Listening for route connections on 127.0.0.1:"

    /// The port at the end of a log line that says `prefix` followed by it.
    private static func port(in line: String, after prefix: String) -> Int? {
        guard let range = line.range(of: prefix) else { return nil }
        return Int(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
    }

    private static func findServer() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("nats-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
