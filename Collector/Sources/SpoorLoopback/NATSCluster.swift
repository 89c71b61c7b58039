package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A throwaway NATS JetStream cluster on 127.0.0.1: `nats-server` processes with `-js`, each with its own
/// temporary store directory and free client and route ports, routed to one another (or one server alone). For the tests and the load
/// tool; nodes can be killed and started again over their store.
///
/// Creating it fails (never skips) when `nats-server` is missing or the cluster does not elect a metadata leader
/// in time. Unchecked: the nodes' processes are guarded by `lock`.
package final class NATSCluster: @unchecked Sendable {
    /// One server: its name, ports and store directory.
    package struct Node: Sendable {
        package var name: String
        package var clientPort: Int
        package var routePort: Int
        package var directory: URL
    }

    package let nodes: [Node]
    private let root: URL
    private let binary: URL
    private let lock = NSLock()
    private var processes: [LineProcess?]

    /// Starts `size` nodes and waits until each knows the cluster's metadata leader.
    package init(size: Int = 3, timeout: Duration = .seconds(30)) throws(LoopbackError) {
        guard let binary = Self.findServer() else {
            throw LoopbackError("nats-server is not installed (scripts/bootstrap installs it)")
        }
        self.binary = binary
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-nats-\(UUID().uuidString)")
        var nodes: [Node] = []
        for index in 0..<size {
            nodes.append(Node(name: "n\(index + 1)", clientPort: try Self.freePort(), routePort: try Self.freePort(),
                              directory: root.appendingPathComponent("n\(index + 1)")))
        }
        self.nodes = nodes
        processes = Array(repeating: nil, count: size)
        do {
            for index in nodes.indices { try launch(index) }
            for index in nodes.indices { try waitForLeader(index, timeout: timeout) }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// `nats://HOST:PORT,…/STREAM` over every node.
    package func url(stream: String) -> String {
        "nats://" + nodes.map { "127.0.0.1:\($0.clientPort)" }.joined(separator: ",") + "/" + stream
    }

    /// The node that leads `stream`'s replicas, from the servers' logs; nil until one said so.
    package func streamLeader(_ stream: String) -> Int? {
        lock.withLock {
            processes.indices.last { index in
                processes[index]?.output.contains { $0.contains("new stream leader for '$G > \(stream)'") } ?? false
            }
        }
    }

    /// Kills node `index` with SIGKILL (its store stays) and waits for it to exit.
    package func kill(_ index: Int) {
        let process = lock.withLock { () -> LineProcess? in
            defer { processes[index] = nil }
            return processes[index]
        }
        process?.stop(signal: SIGKILL)
    }

    /// Starts node `index` again over its store, on its ports, and waits until it knows the metadata leader.
    package func start(_ index: Int, timeout: Duration = .seconds(30)) throws(LoopbackError) {
        try launch(index)
        try waitForLeader(index, timeout: timeout)
    }

    /// Stops every node (SIGTERM) and removes the store directories.
    package func stop() {
        let running = lock.withLock { () -> [LineProcess] in
            defer { processes = processes.map { _ in nil } }
            return processes.compactMap { $0 }
        }
        for process in running { process.stop() }
        try? FileManager.default.removeItem(at: root)
    }

    private func launch(_ index: Int) throws(LoopbackError) {
        let node = nodes[index]
        do {
            try FileManager.default.createDirectory(at: node.directory, withIntermediateDirectories: true)
        } catch {
            throw LoopbackError("cannot create \(node.directory.path): \(error)")
        }
        var arguments = ["-js", "-sd", node.directory.path, "-a", "127.0.0.1", "-p", String(node.clientPort), "-n", node.name]
        if nodes.count > 1 {
            let routes = nodes.indices.filter { $0 != index }.map { "nats://127.0.0.1:\(nodes[$0].routePort)" }.joined(separator: ",")
            arguments += ["--cluster_name", "spoor", "--cluster", "nats://127.0.0.1:\(node.routePort)", "--routes", routes]
        }
        let process = try LineProcess(binary, arguments, readingErrors: true)
        lock.withLock { processes[index] = process }
    }

    /// Waits until node `index` logged the metadata leader (itself or another): the cluster can serve JetStream.
    /// A single server serves JetStream once it is ready.
    private func waitForLeader(_ index: Int, timeout: Duration) throws(LoopbackError) {
        guard let process = lock.withLock({ processes[index] }) else { throw LoopbackError("node \(index) is not running") }
        let single = nodes.count == 1
        do {
            _ = try process.waitForLine(timeout: timeout) { line in
                single ? line.contains("Server is ready")
                    : line.contains("JetStream cluster metadata leader") || line.contains("new metadata leader")
            }
        } catch {
            let log = process.output.suffix(15).joined(separator: "\n")
            throw LoopbackError("nats-server \(nodes[index].name) did not join a JetStream cluster: \(error)\n\(log)")
        }
    }

    private static func findServer() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("nats-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// A port no one listens on now (the kernel's choice for a socket bound to port 0, then closed).
    private static func freePort() throws(LoopbackError) -> Int {
        let (fd, port) = try listenOnLoopback(port: 0)
        _ = close(fd)
        return port
    }
}
