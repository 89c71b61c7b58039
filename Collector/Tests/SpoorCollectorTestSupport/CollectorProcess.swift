public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import SpoorModel
public import SpoorWire
public import SpoorLog
import SpoorFaultProxy

// Shared by the collector's tests and the end-to-end tests: a real collector process, and frames to send it.

/// A real `spoor-collector serve` process on 127.0.0.1, port 0.
/// Its stored properties are set once in `init`, so concurrent requests may share it.
public final class CollectorProcess: @unchecked Sendable {
    public let process: Process
    public let port: Int
    public let directory: URL
    private let ownsDirectory: Bool

    /// The built binary: `SPOOR_COLLECTOR_BIN`, else the package's debug or release build folder.
    public static func binary() throws -> URL { try CollectorLaunch.collectorBinary() }

    /// Starts `spoor-collector serve` on `listen` (port 0: any free port) with `store`, or when nil a SQLite
    /// store in `directory` (a fresh temporary one, removed at the end, when nil; a given one is kept, so a
    /// restart finds its data).
    public init(store: String? = nil, arguments: [String] = [], listen: String = "127.0.0.1:0", directory: URL? = nil) throws {
        ownsDirectory = directory == nil
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("spoor-collector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        let store = store ?? "sqlite:\(self.directory.path)/events.sqlite"
        (process, port) = try CollectorLaunch.start(["serve", "--listen", listen, "--store", store] + arguments)
    }

    deinit {
        stop()
        if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Stops the collector (SIGTERM: a graceful shutdown) and waits for it to exit.
    public func stop() {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
    }

    /// The collector's SQLite file.
    public var databasePath: String { directory.appendingPathComponent("events.sqlite").path }

    /// Its batch endpoint.
    public var batchURL: URL { URL(string: "http://127.0.0.1:\(port)/v1/batch")! }

    /// Sends one request and returns the status, the body and the headers.
    public func request(_ method: String = "POST", _ path: String = "/v1/batch", body: [UInt8] = [],
                 headers: [String: String] = [:]) async throws -> (status: Int, body: String, headers: [String: String]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        if method != "GET" { request.httpBody = Data(body) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw CollectorTestError("the answer is not HTTP") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields["\(name)".lowercased()] = "\(value)" }
        return (http.statusCode, String(decoding: data, as: UTF8.self), fields)
    }
}

public struct CollectorTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Frames of test events.
public enum Frames {
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

    public static func frame(_ events: [Event], batchID: BatchID = .random(), codec: Codec = .zstd) throws -> [UInt8] {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        for event in events { try encoder.appendBatchEntry(event, to: &payload) }
        return try BatchFrame.encode(payload: payload, recordCount: events.count, batchID: batchID, sealedAt: 1_700_000_000_000, codec: codec)
    }
}
