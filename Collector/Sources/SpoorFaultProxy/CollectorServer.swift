public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `spoor-collector serve` process on 127.0.0.1 (port 0) over a SQLite store in its own
/// directory, which can be stopped (gracefully or with SIGKILL) and started again over the same store,
/// for the end-to-end and fault tests.
public final class CollectorServer: @unchecked Sendable {
    /// The directory that holds the store.
    public let directory: URL
    /// The SQLite store file.
    public var databasePath: String { directory.appendingPathComponent("events.sqlite").path }
    /// Extra `serve` arguments (`--token`, `--max-body`, ...).
    public let arguments: [String]
    /// The port of the running process; `nil` while stopped. Guarded by `lock`.
    private var runningPort: Int?
    private var process: Process?
    private let lock = NSLock()

    /// Starts a collector over a new store in a new temporary directory.
    public init(arguments: [String] = []) throws(FaultProxyError) {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-collector-\(UUID().uuidString)")
        self.arguments = arguments
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FaultProxyError("cannot create \(directory.path): \(error)")
        }
        try start()
    }

    deinit {
        stop(kill: true)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The port it listens on, while running.
    public var port: Int? { lock.withLock { runningPort } }

    /// Starts the process (when stopped) and waits for its `listening on` line; returns the port.
    @discardableResult
    public func start() throws(FaultProxyError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        if let runningPort { return runningPort }
        let (process, port) = try CollectorLaunch.start(
            ["serve", "--listen", "127.0.0.1:0", "--store", "sqlite:\(databasePath)"] + arguments)
        self.process = process
        runningPort = port
        return port
    }

    /// Stops the process: SIGTERM (graceful: in-flight requests finish) or SIGKILL; waits for it to exit.
    public func stop(kill: Bool = false) {
        let process = lock.withLock { () -> Process? in
            defer {
                self.process = nil
                runningPort = nil
            }
            return self.process
        }
        guard let process, process.isRunning else { return }
        if kill {
            sendSignal(process.processIdentifier, SIGKILL)
        } else {
            process.terminate()
        }
        process.waitUntilExit()
    }

    /// Stops and starts again over the same store; returns the new port.
    @discardableResult
    public func restart(kill: Bool = false) throws(FaultProxyError) -> Int {
        stop(kill: kill)
        return try start()
    }
}

#if canImport(Darwin)
private func sendSignal(_ pid: Int32, _ signal: Int32) { _ = Darwin.kill(pid, signal) }
#else
private func sendSignal(_ pid: Int32, _ signal: Int32) { _ = Glibc.kill(pid, signal) }
#endif
