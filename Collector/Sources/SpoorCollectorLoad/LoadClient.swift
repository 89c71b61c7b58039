import ArgumentParser
import Foundation
import SpoorFaultProxy
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client on one blocking keep-alive loopback connection: the load generator should cost
/// the machine as little as possible, next to the collector it measures.
struct HTTPClient {
    private let socket: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ValidationError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { close(); throw ValidationError("connect to port \(port): errno \(errno)") }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    func close() { _ = Glibc.close(socket) }

    /// Posts one frame to `/v1/batch` and reads the whole answer.
    mutating func post(_ body: [UInt8]) throws -> (status: Int, body: String) {
        let head = "POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        try send(Array(head.utf8))
        try send(body)
        // The head, up to the blank line.
        var end: Int?
        while end == nil {
            if let index = HTTPHead.end(in: buffer) { end = index } else { try receive() }
        }
        let headText = String(decoding: buffer[..<end!], as: UTF8.self)
        let lines = headText.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1]) else {
            throw ValidationError("bad status line: \(headText)")
        }
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        let bodyStart = end! + 4
        while buffer.count < bodyStart + length { try receive() }
        let answer = String(decoding: buffer[bodyStart..<(bodyStart + length)], as: UTF8.self)
        buffer.removeFirst(bodyStart + length)
        return (status, answer)
    }

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw ValidationError("send: errno \(errno)")
            }
            sent += written
        }
    }

    private mutating func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress!, $0.count, 0) }
        if count < 0, errno == EINTR { return }
        guard count > 0 else { throw ValidationError("the collector closed the connection (errno \(errno))") }
        buffer.append(contentsOf: chunk[..<count])
    }
}

/// A `spoor-collector serve` process started for one run, stopped with SIGTERM.
final class CollectorServer {
    let process: Process
    let port: Int

    init(binary: String, arguments: [String]) throws {
        (process, port) = try CollectorLaunch.start(arguments, binary: URL(fileURLWithPath: binary))
    }

    /// The collector's peak resident memory so far, from /proc.
    func peakRSS() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
            throw ValidationError("no VmHWM for the collector")
        }
        return kilobytes * 1024
    }

    /// The collector's user + system CPU time so far, from /proc.
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        // Fields after the command name, which ends at the last ')': state is field 3, utime 14, stime 15.
        guard let close = stat.lastIndex(of: ")") else { throw ValidationError("bad /proc stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw ValidationError("bad /proc stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
