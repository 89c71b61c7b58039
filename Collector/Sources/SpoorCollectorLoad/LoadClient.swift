import ArgumentParser
import Foundation
import SpoorLoopback
#if canImport(Glibc)
import Glibc
#endif

/// One client of the load: a keep-alive loopback connection posting frames to `/v1/batch` and reading each answer
/// before the next, on the blocking ``HTTPConnection`` so that the load costs the machine as little as possible
/// next to the collector it measures.
struct BatchPoster {
    private let connection: HTTPConnection

    init(port: Int) throws {
        do {
            connection = try HTTPConnection(connectingTo: port)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func close() { connection.close() }

    /// `GET path` and its body.
    func get(_ path: String) throws -> String {
        guard connection.write(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)) else {
            throw ValidationError("the collector closed the connection (errno \(errno))")
        }
        do {
            return String(decoding: try connection.readResponse().body, as: UTF8.self)
        } catch {
            throw ValidationError("reading the collector's answer: \(error)")
        }
    }

    /// Posts one frame and reads the whole answer.
    func post(_ body: [UInt8]) throws -> (status: Int, body: String) {
        let head = "POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-spoor-batch\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        guard connection.write(Array(head.utf8) + body) else {
            throw ValidationError("the collector closed the connection (errno \(errno))")
        }
        do {
            let answer = try connection.readResponse()
            return (answer.status, String(decoding: answer.body, as: UTF8.self))
        } catch {
            throw ValidationError("reading the collector's answer: \(error)")
        }
    }
}

/// The `spoor-collector serve` process a run measures, with its CPU time and peak memory.
final class CollectorUnderLoad {
    let process: LineProcess
    let port: Int

    init(binary: String, arguments: [String]) async throws {
        (process, port) = try await CollectorLaunch.start(URL(fileURLWithPath: binary), arguments)
    }

    /// The collector's peak resident memory so far.
    func peakRSS() throws -> Int { try ProcessUsage.peakRSS(of: process.pid) }

    /// The collector's user + system CPU time so far.
    func cpuSeconds() throws -> Double { try ProcessUsage.cpuSeconds(of: process.pid) }

    /// The sum and count of a Prometheus histogram (all its series) on `/metrics`.
    func histogram(_ name: String) throws -> (sum: Double, count: Double) {
        let client = try BatchPoster(port: port)
        defer { client.close() }
        var sum = 0.0, count = 0.0
        for line in try client.get("/metrics").split(separator: "\n") where !line.hasPrefix("#") {
            guard let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            if line.hasPrefix(name + "_sum") { sum += value }
            if line.hasPrefix(name + "_count") { count += value }
        }
        return (sum, count)
    }

    /// Stops it with SIGTERM, gracefully, and waits for it to exit.
    func stop() async throws {
        try await process.stop()
    }
}
