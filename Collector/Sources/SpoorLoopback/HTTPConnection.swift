import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a loopback connection, listener or collector process failed.
package struct LoopbackError: Error, CustomStringConvertible {
    /// What went wrong.
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Why an HTTP exchange ended early.
package enum WireError: Error {
    /// The peer closed (or reset) the connection, or it was shut down here.
    case closed
    /// The bytes are not an HTTP/1.1 message this reader understands.
    case malformed(String)
}

/// A blocking TCP connection on 127.0.0.1 with a read buffer and just enough HTTP/1.1 for tools that drive a
/// collector from outside: the load generator's clients and the test fault proxy, on both of its sides.
///
/// Blocking sockets, one thread each: cheap next to the collector it measures, and simple to reason about.
package final class HTTPConnection {
    /// The socket.
    package let fd: Int32
    private var buffer: [UInt8] = []

    /// The largest message head read: a loopback peer sending more is not speaking HTTP to us.
    private static let maxHeadBytes = 64 << 10

    /// Wraps an open (accepted or connected) socket; the connection owns it from now on.
    package init(fd: Int32) {
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Connects to 127.0.0.1:`port`.
    package convenience init(connectingTo port: Int) throws(LoopbackError) {
        let fd = socket(AF_INET, streamSocketType, 0)
        guard fd >= 0 else { throw LoopbackError("socket: errno \(errno)") }
        var address = loopbackAddress(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connectSocket(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            _ = closeSocket(fd)
            throw LoopbackError("connect to 127.0.0.1:\(port): errno \(code)")
        }
        self.init(fd: fd)
    }

    // MARK: Reading

    /// Fills the buffer with whatever arrives next; throws `closed` at the end of the stream.
    private func fill() throws(WireError) {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .closed }
            buffer.append(contentsOf: chunk[0..<count])
            return
        }
    }

    /// Reads up to the blank line that ends a message head, and parses it.
    package func readHead() throws(WireError) -> MessageHead {
        var searched = 0
        while true {
            if let end = Self.headEnd(in: buffer, from: searched) {
                let text = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                return try MessageHead(lines: text.components(separatedBy: "\r\n"))
            }
            guard buffer.count < Self.maxHeadBytes else { throw .malformed("head over \(Self.maxHeadBytes >> 10) KiB") }
            // The blank line may straddle what came before and what comes next.
            searched = max(0, buffer.count - 3)
            try fill()
        }
    }

    /// Reads a response: its head (after any `100 Continue`), status and body.
    package func readResponse() throws(WireError) -> (head: MessageHead, status: Int, body: [UInt8]) {
        var head = try readHead()
        while head.status == 100 { head = try readHead() }
        guard let status = head.status else { throw .malformed("status line \(head.firstLine)") }
        return (head, status, try readBody(headers: head.dictionary, untilClose: true))
    }

    /// Reads exactly `count` bytes.
    package func read(exactly count: Int) throws(WireError) -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads at most `count` bytes that have arrived (at least one).
    package func read(upTo count: Int) throws(WireError) -> [UInt8] {
        if buffer.isEmpty { try fill() }
        let bytes = Array(buffer.prefix(count))
        buffer.removeFirst(bytes.count)
        return bytes
    }

    /// Reads until the peer closes.
    package func readToEnd() -> [UInt8] {
        while (try? fill()) != nil {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Reads one CRLF-terminated line (chunked encoding).
    private func readLine() throws(WireError) -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[0..<index], as: UTF8.self).trimmingCharacters(in: .whitespaces)
                buffer.removeFirst(index + 1)
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            try fill()
        }
    }

    /// Reads a message body as its headers (names lowercased) describe it, `Content-Length` or chunked;
    /// `untilClose` for a response with neither.
    package func readBody(headers: [String: String], untilClose: Bool) throws(WireError) -> [UInt8] {
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            var body: [UInt8] = []
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16), size >= 0 else {
                    throw .malformed("chunk size \(sizeLine)")
                }
                if size == 0 {
                    while try !readLine().isEmpty {}
                    return body
                }
                body += try read(exactly: size)
                _ = try read(exactly: 2)
            }
        }
        if let length = headers["content-length"] {
            guard let count = Int(length), count >= 0 else { throw .malformed("content-length \(length)") }
            return try read(exactly: count)
        }
        return untilClose ? readToEnd() : []
    }

    /// Where the `\r\n\r\n` that closes a head starts in `bytes`, looking from `start` on; nil when it has not come.
    private static func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4, start <= bytes.count - 4 else { return nil }
        for index in start...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    // MARK: Writing and closing

    /// Writes all of `bytes`; false when the peer is gone.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + done, $0.count - done, sendFlags) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return false }
            done += count
        }
        return true
    }

    /// Closes the socket.
    package func close() {
        _ = closeSocket(fd)
    }

    /// Closes with a reset instead of a FIN.
    package func reset() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Wakes any thread blocked on this socket (it then sees `closed`).
    package func shutDown() {
        shutdown(fd, Int32(SHUT_RDWR))
    }
}

/// A request or response head: the first line and the header fields, names lowercased.
package struct MessageHead {
    /// The request line (`POST /v1/batch HTTP/1.1`) or status line (`HTTP/1.1 200 OK`).
    package var firstLine: String
    /// The fields in order, names lowercased.
    package var fields: [(name: String, value: String)]

    /// Parses the lines of a head, the first line first.
    package init(lines: [String]) throws(WireError) {
        guard let first = lines.first, !first.isEmpty else { throw .malformed("empty head") }
        firstLine = first
        fields = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line \(line)") }
            fields.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
    }

    /// A head from its parts.
    package init(firstLine: String, fields: [(name: String, value: String)]) {
        self.firstLine = firstLine
        self.fields = fields
    }

    /// The status code of a response head; nil for anything else.
    package var status: Int? {
        let parts = firstLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return nil }
        return Int(parts[1])
    }

    /// The fields as a dictionary (the last of repeated names wins).
    package var dictionary: [String: String] {
        var result: [String: String] = [:]
        for field in fields { result[field.name] = field.value }
        return result
    }

    /// The head as bytes, with the fields except `dropping` and then `adding`.
    package func serialized(dropping: Set<String> = [], adding: [(String, String)] = []) -> [UInt8] {
        var text = firstLine + "\r\n"
        for field in fields where !dropping.contains(field.name) { text += "\(field.name): \(field.value)\r\n" }
        for (name, value) in adding { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}

/// A listening socket on 127.0.0.1 (`port` 0 picks a free one); the socket and the port it got.
package func listenOnLoopback(port: Int) throws(LoopbackError) -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, streamSocketType, 0)
    guard fd >= 0 else { throw LoopbackError("socket: errno \(errno)") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = loopbackAddress(port: port)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
        let code = errno
        _ = closeSocket(fd)
        throw LoopbackError("bind 127.0.0.1:\(port): errno \(code)")
    }
    var actual = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &actual) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: actual.sin_port)))
}

private func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    #if canImport(Darwin)
    address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
    #endif
    return address
}

#if canImport(Darwin)
private let streamSocketType = SOCK_STREAM
private let sendFlags: Int32 = 0
private func connectSocket(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    Darwin.connect(fd, address, length)
}
private func closeSocket(_ fd: Int32) -> Int32 { Darwin.close(fd) }
#else
private let streamSocketType = Int32(SOCK_STREAM.rawValue)
// No SIGPIPE when the peer has gone away; the write just fails.
private let sendFlags = Int32(MSG_NOSIGNAL)
private func connectSocket(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    Glibc.connect(fd, address, length)
}
private func closeSocket(_ fd: Int32) -> Int32 { Glibc.close(fd) }
#endif
