public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import SpoorModel
public import SpoorWire
package import SpoorLoopback
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Shared by the collector's, the end-to-end and the fault tests: real collector processes, requests, and frames.

/// A real `spoor-collector serve` process on 127.0.0.1, which can be stopped (gracefully or with SIGKILL) and
/// started again over the same store. Safe to share between concurrent requests.
///
/// It listens on a port of its own choice (`--listen 127.0.0.1:0`) unless told otherwise, so a restarted collector
/// has a new port: a client that must keep one address goes through a `FaultProxy`. Starting and stopping are
/// awaited without blocking a thread of the cooperative pool. Unless `arguments` give one, the store timeout is
/// minutes (``storeTimeout``): a test that is not about timeouts must not fail because a loaded machine was slow.
public final class CollectorProcess: Sendable {
    /// The directory of the SQLite store (unused with another `store`).
    public let directory: URL
    private let ownsDirectory: Bool
    private let serveArguments: [String]
    /// The process's environment, when not this process's.
    private let environment: [String: String]?
    /// The file its standard error (the server's log) is appended to, if any.
    public let errorLog: URL?
    private let state: Locked<State>

    private struct State {
        /// The running process, or the last one once stopped.
        var current: LineProcess
        /// Its port (the last one, once stopped).
        var port: Int
        var running = true
    }

    /// The `--store-timeout` of a collector whose test did not choose one: a bound for a hang, not a speed.
    public static let storeTimeout = "300"

    /// The built `spoor-collector`: `SPOOR_COLLECTOR_BIN`, else the package's debug or release build.
    public static func binary() throws -> URL {
        try builtProduct("spoor-collector", override: "SPOOR_COLLECTOR_BIN")
    }

    /// The Collector package's build of `product`: the path in the environment variable `override` when set,
    /// else its debug build folder, else its release one.
    public static func builtProduct(_ product: String, override: String) throws -> URL {
        if let path = ProcessInfo.processInfo.environment[override] { return URL(fileURLWithPath: path) }
        // Tests/SpoorCollectorTestSupport/CollectorProcess.swift → the Collector package.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let candidate = package.appendingPathComponent(".build/\(configuration)/\(product)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw CollectorTestError("\(product) is not built under \(package.path)/.build; run swift build first")
    }

    /// Starts `spoor-collector serve` on `listen` (port 0: any free port, a new one at each start) with `store`, or
    /// when nil a SQLite store in `directory` (a fresh temporary one, removed at the end, when nil; a given one is
    /// kept, so a later collector finds its data). `arguments` go to `serve` as well. `environment` adds variables
    /// to the process's environment; with `keepingLog`, its standard error is also kept in ``errorLog``.
    public init(store: String? = nil, arguments: [String] = [], listen: String = "127.0.0.1:0", directory: URL? = nil,
                environment: [String: String] = [:], keepingLog: Bool = false) async throws {
        ownsDirectory = directory == nil
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("spoor-collector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        let store = store ?? "sqlite:\(self.directory.appendingPathComponent("events.sqlite").path)"
        let timeout = arguments.contains("--store-timeout") ? [] : ["--store-timeout", Self.storeTimeout]
        serveArguments = ["serve", "--listen", listen, "--store", store] + timeout + arguments
        self.environment = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        errorLog = keepingLog ? self.directory.appendingPathComponent("collector.log") : nil
        let (process, port) = try await CollectorLaunch.start(
            Self.binary(), serveArguments, environment: self.environment, standardError: errorLog
        )
        state = Locked(State(current: process, port: port))
    }

    /// A collector still running is killed (nothing waits); its directory, when temporary, removed.
    deinit {
        state.withLock { $0.current }.signal(SIGKILL)
        if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The process: the running one, or the last one once stopped.
    package var process: LineProcess { state.withLock { $0.current } }

    /// The process id of the running (or last) process.
    public var pid: Int32 { process.pid }

    /// The port it listens on (the last one it listened on, once stopped).
    public var port: Int { state.withLock { $0.port } }

    /// Starts the process again when stopped, over the same store, and waits until it listens; returns the port.
    @discardableResult
    public func start() async throws -> Int {
        if let port = state.withLock({ $0.running ? $0.port : nil }) { return port }
        let (process, port) = try await CollectorLaunch.start(
            Self.binary(), serveArguments, environment: environment, standardError: errorLog
        )
        state.withLock { state in
            state.current = process
            state.port = port
            state.running = true
        }
        return port
    }

    /// Stops the process, with SIGTERM (graceful: requests in flight finish, the store is closed) or SIGKILL, and
    /// waits for it to exit.
    public func stop(kill: Bool = false) async throws {
        let process = state.withLock { state -> LineProcess? in
            defer { state.running = false }
            return state.running ? state.current : nil
        }
        try await process?.stop(signal: kill ? SIGKILL : SIGTERM)
    }

    /// Stops and starts again over the same store; returns the new port.
    @discardableResult
    public func restart(kill: Bool = false) async throws -> Int {
        try await stop(kill: kill)
        return try await start()
    }

    /// Waits for the process to exit by itself (after a signal the test sent, say) and returns its exit status;
    /// throws if it is still running after `timeout`.
    package func waitForExit(timeout: Duration = waitBound) async throws -> Int32 {
        let status = try await process.exitStatus(timeout: timeout)
        state.withLock { $0.running = false }
        return status
    }

    /// Sends `signal` to the running process.
    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// The collector's SQLite file.
    public var databasePath: String { directory.appendingPathComponent("events.sqlite").path }

    /// Its batch endpoint.
    public var batchURL: URL { URL(string: "http://127.0.0.1:\(port)/v1/batch")! }

    /// Sends one request to the collector and returns the status, the body and the headers. A POST without a
    /// `Content-Type` is sent as a batch (`application/x-spoor-batch`), as the tracker sends it.
    public func request(_ method: String = "POST", _ path: String = "/v1/batch", body: [UInt8] = [],
                        headers: [String: String] = [:]) async throws -> (status: Int, body: String, headers: [String: String]) {
        var headers = headers
        if method == "POST", !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = BatchFrame.mediaType
        }
        return try await TestHTTP.send(method, URL(string: "http://127.0.0.1:\(port)\(path)")!, body: body, headers: headers)
    }
}

/// Requests as the tests make them, through URLSession like the uploader.
public enum TestHTTP {
    /// A status, a body and the headers (names lowercased).
    public typealias Answer = (status: Int, body: String, headers: [String: String])

    /// Sends `request` again at once while the collector answers 503 `store_unavailable`, and returns the first
    /// other answer and how many requests were sent. A collector with a short `--store-timeout` may refuse a request
    /// that a loaded machine makes slow (a fresh PostgreSQL backend, a SQLite commit); each such refusal took the
    /// timeout, so the loop paces itself, and past `attempts` it fails.
    public static func untilStored(attempts: Int = 100, _ request: () async throws -> Answer) async throws -> (answer: Answer, sent: Int) {
        for sent in 1...attempts {
            let answer = try await request()
            guard answer.status == 503, answer.body.hasPrefix(#"{"error":"store_unavailable","#) else { return (answer, sent) }
        }
        throw CollectorTestError("the store stayed unavailable through \(attempts) requests")
    }

    /// Sends one request and returns the status, the body and the headers (names lowercased); a network error
    /// (a reset, a timeout) throws the `URLError`. `timeout` is the session's, counted in whole seconds on Linux; by
    /// default minutes, a bound for a hang.
    package static func send(_ method: String, _ url: URL, body: [UInt8] = [], headers: [String: String] = [:],
                             timeout: TimeInterval = waitBound.timeInterval) async throws -> (status: Int, body: String, headers: [String: String]) {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if method != "GET" { request.httpBody = Data(body) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw CollectorTestError("the answer is not HTTP") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields["\(name)".lowercased()] = "\(value)" }
        return (http.statusCode, String(decoding: data, as: UTF8.self), fields)
    }
}

/// A test's own failure: something it needs could not be had.
public struct CollectorTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Frames of test events.
public enum Frames {
    /// `count` events of one install, every third an `$AppStart`, the others `name`.
    public static func events(_ count: Int, name: String = "ViewProduct") -> [Event] {
        (0..<count).map { index -> Event in
            let lib = LibInfo(lib: "Swift", libVersion: "1.0", method: .code)
            let eventName = index % 3 == 0 ? "$AppStart" : name
            let time: Int64 = 1_700_000_000_000 + Int64(index)
            let properties: Properties = ["price": .double(Double(index))]
            return Event(name: eventName, time: time, trackID: UInt64(index) &* 0x9E37, sequence: UInt64(index),
                         distinctID: "user-\(index % 5)", anonymousID: "anon-1", lib: lib, properties: properties)
        }
    }

    /// `ViewProduct` events of the install `anonymousID`, one for each sequence number.
    public static func events(anonymousID: String, sequences: Range<UInt64>) -> [Event] {
        sequences.map { sequence in
            Event(name: "ViewProduct", time: 1_700_000_000_000 + Int64(sequence), trackID: sequence &* 0x9E37,
                  sequence: sequence, distinctID: "user-1", anonymousID: anonymousID,
                  lib: LibInfo(lib: "Swift", libVersion: "1.0", method: .code), properties: ["price": .double(Double(sequence))])
        }
    }

    /// The body a `FuzzCollectorIngest` corpus input stands for, as the fuzz target reads it: an input that starts
    /// with 0xFE is `0xFE, record count, Batch payload`, sealed into a valid frame (codec none); others are bodies.
    public static func body(forFuzzInput input: [UInt8]) -> [UInt8] {
        guard input.count >= 2, input[0] == 0xFE else { return input }
        return (try? BatchFrame.encode(payload: Array(input.dropFirst(2)), recordCount: Int(input[1]),
                                       batchID: BatchID(high: 7, low: UInt64(input.count)), sealedAt: 0, codec: .none)) ?? input
    }

    /// The events sealed into one frame.
    public static func frame(_ events: [Event], batchID: BatchID = .random(), codec: Codec = .zstd) throws -> [UInt8] {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        for event in events { try encoder.appendBatchEntry(event, to: &payload) }
        return try BatchFrame.encode(payload: payload, recordCount: events.count, batchID: batchID, sealedAt: 1_700_000_000_000, codec: codec)
    }
}
