import Foundation
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorModel
import SpoorSystem
import SpoorWire
import Testing

/// A blocking connection handed between a test's task and the thread that reads it, never used by two at once.
struct HeldConnection: @unchecked Sendable {
    let connection: HTTPConnection
}

/// Raw HTTP/1.1 over loopback, for requests URLSession would not send as written (odd queries, half-sent heads).
enum RawHTTP {
    /// Opens a connection to `port`, on a thread of its own (a blocking connect).
    static func connect(port: Int) async throws -> HeldConnection {
        try await onThreadOfItsOwn { () throws(LoopbackError) in HeldConnection(connection: try HTTPConnection(connectingTo: port)) }
    }

    /// Runs `work`, which blocks on `held`'s socket, on a thread of its own; if it has not returned within `bound`
    /// (minutes: a hang, not a slow machine), the connection is shut down, which ends the read or write it waits in.
    static func using<Value: Sendable>(
        _ held: HeldConnection, within bound: Duration = waitBound, _ work: @escaping @Sendable (HTTPConnection) throws -> Value
    ) async throws -> Value {
        let returned = Promise<Bool>()
        Task {
            if await !returned.value(orAfter: bound, false) { held.connection.shutDown() }
        }
        defer { returned.fulfil(true) }
        return try await onThreadOfItsOwn { () throws in try work(held.connection) }
    }

    /// Sends `bytes` on a new connection to `port` and reads one response, off the cooperative pool since the
    /// socket blocks. A connection the collector closes without answering throws.
    static func exchange(port: Int, _ bytes: [UInt8]) async throws -> (status: Int, headers: [String: String], body: String) {
        let held = try await connect(port: port)
        defer { held.connection.close() }
        return try await using(held) { connection in
            guard connection.write(bytes) else { throw CollectorTestError("the collector closed before the request was sent") }
            let response = try connection.readResponse()
            return (response.status, response.head.dictionary, String(decoding: response.body, as: UTF8.self))
        }
    }

    /// A GET of `target` (path and query, as sent) with `headers`.
    static func get(port: Int, _ target: String, headers: [String: String] = [:]) async throws
        -> (status: Int, headers: [String: String], body: String) {
        var head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return try await exchange(port: port, Array((head + "\r\n").utf8))
    }
}

@Suite("A hostile client against a real collector process")
struct HostileClientTests {
    /// The query that overflowed the feed's arithmetic, and the process is still up and answering afterwards.
    @Test("GET /v1/events/recent?after=2^64-1 answers 200 with no events, before and after events were stored")
    func largestPosition() async throws {
        let collector = try await CollectorProcess()
        for round in 0..<2 {
            let answer = try await collector.request("GET", "/v1/events/recent?after=18446744073709551615")
            #expect(answer.status == 200, "round \(round): \(answer.body)")
            let read = try JSONValue.parse(answer.body)
            #expect(read["events"]?.elements?.isEmpty == true)
            #expect(read["skipped"] == .int(0))
            #expect(try await collector.request(body: Frames.frame(Frames.events(5))).status == 200)
        }
        #expect(!collector.process.hasExited)
        #expect(try await collector.request("GET", "/healthz").status == 200)
        let read = try JSONValue.parse(try await collector.request("GET", "/v1/events/recent?after=18446744073709551614").body)
        #expect(read["latest"] == .int(10) && read["events"]?.elements?.isEmpty == true)
    }

    /// Every query edge gets its status, and the collector stays up and stores what it answered 200 for once.
    @Test("Query edges: huge, negative, non-numeric, repeated, badly encoded and very long queries")
    func queryEdges() async throws {
        let collector = try await CollectorProcess()
        #expect(try await collector.request(body: Frames.frame(Frames.events(3))).status == 200)
        let long = String(repeating: "0", count: 5000) + "1"
        let manyParameters = (0..<2000).map { "x\($0)=1" }.joined(separator: "&")
        let cases: [(query: String, status: Int)] = [
            ("after=18446744073709551615", 200),
            ("after=18446744073709551614&limit=1000", 200),
            ("after=3", 200),
            ("after=0&limit=1", 200),
            ("", 200),
            ("&&after=1&", 200),
            ("%61fter=1", 200),                      // a percent-encoded name is the name
            ("after=18446744073709551616", 400),     // 2^64
            ("after=99999999999999999999999999", 400),
            ("after=-1", 400),
            ("after=-0", 400),
            ("after=+1", 400),
            ("after=0x10", 400),
            ("after=1e3", 400),
            ("after=1.0", 400),
            ("after=%EF%BC%91", 400),                // a full-width digit one
            ("after=%D9%A1", 400),                   // an Arabic-Indic digit one
            ("after=", 400),
            ("after", 400),
            ("after=%", 400),
            ("after=%zz", 400),
            ("after=%00", 400),
            ("after=%FF", 400),                      // not UTF-8
            ("after=1%00", 400),
            ("after=1&after=1", 400),
            ("after=1&%61fter=2", 400),
            ("limit=0", 400),
            ("limit=1001", 400),
            ("limit=-1", 400),
            ("limit=9223372036854775808", 400),      // 2^63
            ("limit=18446744073709551616", 400),
            ("limit=abc", 400),
            ("since=1", 400),
            ("=1", 400),
            ("after=\(long)", 400),                  // longer than any position needs
            (manyParameters, 400),
        ]
        for (query, status) in cases {
            let answer = try await RawHTTP.get(port: collector.port, "/v1/events/recent?\(query)")
            #expect(answer.status == status, "?\(query.prefix(80)): \(answer.body.prefix(300))")
            if status == 400 { #expect(answer.body.hasPrefix(#"{"error":"bad_query","#), "?\(query.prefix(80))") }
            #expect(answer.body.utf8.count < 4096 || status == 200, "?\(query.prefix(80)): an error echoes at most a bounded part of the query")
        }
        // A request line past the head limit is refused by the HTTP parser, without the collector holding it.
        let huge = "/v1/events/recent?after=" + String(repeating: "1", count: 1 << 20)
        let hugeAnswer = try? await RawHTTP.get(port: collector.port, huge)
        #expect(hugeAnswer == nil || hugeAnswer!.status >= 400, "a 1 MiB request line: \(hugeAnswer?.status ?? 0)")
        #expect(!collector.process.hasExited)
        #expect(try await collector.request("GET", "/healthz").status == 200)
        #expect(try await collector.request(body: Frames.frame(Frames.events(4))).status == 200)
        let stored = try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +)
        #expect(stored == 7)
    }

    /// A client that opens connections and sends almost nothing: half of them a head declaring a 4 MB body then one
    /// byte of it, half an unfinished head. Meanwhile a real client is answered 200 within seconds.
    @Test("300 slow connections (150 declared bodies, 150 unfinished heads) while a real client gets 200 within seconds")
    func slowConnections() async throws {
        let collector = try await CollectorProcess()
        let port = collector.port
        let connections = try await onThreadOfItsOwn { () throws -> [HeldConnection] in
            var opened: [HeldConnection] = []
            for index in 0..<300 {
                let connection = try HTTPConnection(connectingTo: port)
                let head = index % 2 == 0
                    ? "POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-spoor-batch\r\nContent-Length: 4000000\r\n\r\nS"
                    : "POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica"
                guard connection.write(Array(head.utf8)) else { throw CollectorTestError("connection \(index) closed early") }
                opened.append(HeldConnection(connection: connection))
            }
            return opened
        }
        defer { connections.forEach { $0.connection.close() } }
        let start = ContinuousClock.now
        let frame = try Frames.frame(Frames.events(10))
        let answer = try await TestHTTP.send("POST", collector.batchURL, body: frame, headers: ["Content-Type": BatchFrame.mediaType])
        let elapsed = ContinuousClock.now - start
        print("a real client behind 300 slow connections: \(answer.status) after \(elapsed)")
        #expect(answer.status == 200, "\(answer.body)")
        // Seconds on an idle machine; the bound leaves a busy one room. The status is what tells a starved collector
        // (503: every slot held by a slow client) from a working one.
        #expect(elapsed < .seconds(60), "answered after \(elapsed)")
        #expect(try await collector.request("GET", "/healthz").status == 200)
    }

    /// Waits, at most `bound`, for the collector to close `connection` (the read sees the end), and says how long it
    /// took; nil when it was still open then (the connection is shut down here to end the wait).
    static func closing(_ held: HeldConnection, within bound: Duration = waitBound) async throws -> Duration? {
        let start = ContinuousClock.now
        _ = try await RawHTTP.using(held, within: bound) { connection in connection.readToEnd() }
        let elapsed = ContinuousClock.now - start
        return elapsed < bound ? elapsed : nil
    }

    @Test("An unfinished head is closed after --idle-timeout; a body slower than its deadline is answered 408 and closed")
    func timeouts() async throws {
        let collector = try await CollectorProcess(arguments: ["--idle-timeout", "1"])
        let port = collector.port
        let unfinished = try await RawHTTP.connect(port: port)
        defer { unfinished.connection.close() }
        _ = try await RawHTTP.using(unfinished) { connection in connection.write(Array("POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)) }
        // Without the idle timeout nothing would ever close it, and the wait would end at its bound instead.
        let headClosed = try await Self.closing(unfinished)
        #expect(headClosed != nil, "an unfinished head stayed open")

        // A body that stalls is cut at its deadline (the idle timeout, longer here, would close it without an answer).
        let deadlines = try await CollectorProcess(arguments: ["--idle-timeout", "60", "--body-timeout", "1", "--min-body-rate", "100000"])
        let deadlinePort = deadlines.port
        let slow = try await RawHTTP.connect(port: deadlinePort)
        defer { slow.connection.close() }
        let start = ContinuousClock.now
        let response = try await RawHTTP.using(slow) { connection -> (status: Int, body: [UInt8]) in
            let head = "POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-spoor-batch\r\nContent-Length: 4000\r\n\r\n"
            _ = connection.write(Array(head.utf8) + [UInt8](repeating: 0x53, count: 10))
            let response = try connection.readResponse()
            return (response.status, response.body)
        }
        #expect(response.status == 408, "\(String(decoding: response.body, as: UTF8.self))")
        // Before the idle timeout (60 s here), which would have closed it without an answer.
        #expect(ContinuousClock.now - start < .seconds(60))
        let bodyClosed = try await Self.closing(slow)
        #expect(bodyClosed != nil, "the slow body's connection stayed open")
        #expect(try await collector.request(body: Frames.frame(Frames.events(2))).status == 200)
        #expect(try await deadlines.request(body: Frames.frame(Frames.events(2))).status == 200)
    }

    /// A frame whose events are control characters: small on the wire, `count` events of about 1 MiB each once
    /// decompressed, and six times that as escaped row text (U+0001 is written `\u0001`).
    static func inflatingFrame(events count: Int) throws -> [UInt8] {
        let value = String(repeating: "\u{1}", count: 8000)
        let events = (0..<count).map { index in
            var properties: Properties = [:]
            for key in 0..<120 { properties["p\(key)"] = .string(value) }
            return Event(name: "Inflate", time: 1_700_000_000_000, trackID: UInt64(index + 1), sequence: UInt64(index),
                         distinctID: "u", anonymousID: "a", lib: LibInfo(lib: "Swift", libVersion: "1.0", method: .code),
                         properties: properties)
        }
        return try Frames.frame(events)
    }

    /// A frame of ordinary events (short printable strings) whose payload is about `payloadBytes`.
    static func largeFrame(payloadBytes: Int) throws -> [UInt8] {
        let value = String(repeating: "abcdefgh", count: 1000)
        let count = payloadBytes / (40 * 8000) + 1
        let events = (0..<count).map { index in
            var properties: Properties = [:]
            for key in 0..<40 { properties["p\(key)"] = .string(value) }
            return Event(name: "Large", time: 1_700_000_000_000, trackID: UInt64(index + 1), sequence: UInt64(index),
                         distinctID: "u", anonymousID: "large", lib: LibInfo(lib: "Swift", libVersion: "1.0", method: .code),
                         properties: properties)
        }
        return try Frames.frame(events)
    }

    /// A frame of 60 bytes that declares `declared` bytes of zstd payload: junk after the header, or (`asZstd`) a
    /// real zstd frame header stating that size followed by junk blocks.
    static func junkFrame(declared: Int, asZstd: Bool, seed: UInt64) throws -> [UInt8] {
        var random = SplitMix64(seed: seed)
        var stored = (0..<60).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        if asZstd {
            // Magic, a frame header descriptor with a 4-byte content size and a single segment, the size, then junk.
            stored[0...3] = [0x28, 0xB5, 0x2F, 0xFD]
            stored[4] = 0xA0
            withUnsafeBytes(of: UInt32(declared).littleEndian) { stored.replaceSubrange(5..<9, with: $0) }
        }
        var frame = try BatchFrame.encode(payload: stored, recordCount: 1, batchID: .random(), sealedAt: 0, codec: .none)
        frame[5] = Codec.zstd.rawValue
        withUnsafeBytes(of: UInt32(declared).littleEndian) { frame.replaceSubrange(12..<16, with: $0) }
        let crc = CRC32C.checksum(Array(frame[0..<48]))
        withUnsafeBytes(of: crc.littleEndian) { frame.replaceSubrange(48..<52, with: $0) }
        return frame
    }

    @Test("16 inflating bodies and 32 junk frames declaring 60 MiB at once: the collector's peak RSS stays under 512 MiB",
          arguments: [[String](), ["--max-decompressed", String(64 << 20)]])
    func inflatingBodies(arguments: [String]) async throws {
        let collector = try await CollectorProcess(arguments: arguments)
        // Built on a thread of their own: encoding and compressing 60 MiB would hold a thread of the cooperative pool.
        let inflating = try await onThreadOfItsOwn { () throws in try Self.inflatingFrame(events: 60) }
        let junk = try (0..<32).map { try Self.junkFrame(declared: 60 << 20, asZstd: $0 % 2 == 0, seed: UInt64($0)) }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { try await collector.request(body: inflating).status } }
            for body in junk { group.addTask { try await collector.request(body: body).status } }
            var statuses: [Int: Int] = [:]
            for try await status in group { statuses[status, default: 0] += 1 }
            return statuses
        }
        print("inflating and junk bodies \(arguments): statuses \(statuses.sorted { $0.key < $1.key })")
        #expect(statuses[200] == nil && statuses[500] == nil, "\(statuses)")
        #expect(!collector.process.hasExited)
        // Still serving, and what it accepts it stores once.
        let frame = try Frames.frame(Frames.events(7))
        #expect(try await collector.request(body: frame).status == 200)
        #expect(try await collector.request(body: frame).body.contains(#""duplicate":true"#))
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 7)
        let rss = try ProcessUsage.peakRSS(of: collector.pid)
        print("collector peak RSS after inflating and junk bodies \(arguments): \(rss >> 20) MiB")
        #expect(rss < 512 << 20, "peak RSS \(rss >> 20) MiB")
    }

    @Test("The most one request holds at the defaults: computed from the limits, and measured on the largest batches")
    func largestRequest() async throws {
        let collector = try await CollectorProcess()
        // Warm up (the first batch loads code and SQLite's caches), then take the baseline.
        #expect(try await collector.request(body: Frames.frame(Frames.events(100))).status == 200)
        let pid = collector.pid
        let baseline = try ProcessUsage.peakRSS(of: pid)
        // Ordinary events up to the 4 MiB payload limit are stored; control characters up to it pass the payload
        // limit and meet the row-text cap.
        let large = try await onThreadOfItsOwn { () throws in try Self.largeFrame(payloadBytes: (4 << 20) - (400 << 10)) }
        let largeAnswer = try await collector.request(body: large)
        #expect(largeAnswer.status == 200, "\(largeAnswer.body)")
        let stored = try ProcessUsage.peakRSS(of: pid)
        let inflating = try await onThreadOfItsOwn { () throws in try Self.inflatingFrame(events: 4) }
        let inflatingAnswer = try await collector.request(body: inflating)
        #expect(inflatingAnswer.status == 413 && inflatingAnswer.body.contains("rows_too_large"), "\(inflatingAnswer.body)")
        let refused = try ProcessUsage.peakRSS(of: pid)
        // Computed: the body (4 MiB at most), the payload (4 MiB) and twice the row text (16 MiB).
        let computed = (4 << 20) + (4 << 20) + 2 * (16 << 20)
        print("""
            one request at the defaults: computed at most \(computed >> 20) MiB; measured peak RSS \(baseline >> 20) MiB before, \
            \(stored >> 20) MiB after a stored \(large.count)-byte frame of a 3.6 MiB payload, \
            \(refused >> 20) MiB after a refused \(inflating.count)-byte frame of control characters
            """)
        #expect(refused - baseline <= computed, "one request took \((refused - baseline) >> 20) MiB")
    }
}

