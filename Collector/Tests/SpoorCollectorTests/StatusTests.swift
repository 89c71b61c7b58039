import Foundation
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorModel
import SpoorWire
import Testing

@Suite("Every status of the HTTP API, on a real collector process", .timeLimit(.minutes(10)))
struct StatusTests {
    @Test("413 for a body over --max-body, before reading it")
    func bodyTooLarge() async throws {
        let collector = try await CollectorProcess(arguments: ["--max-body", "1000"])
        let answer = try await collector.request(body: [UInt8](repeating: 7, count: 1001))
        #expect(answer.status == 413)
        #expect(answer.body == #"{"error":"body_too_large","detail":"Content-Length 1001 is past the 1000-byte limit"}"#)
    }

    @Test("413 for a declared decompressed size over --max-decompressed")
    func decompressedTooLarge() async throws {
        let collector = try await CollectorProcess(arguments: ["--max-decompressed", "100"])
        let frame = try Frames.frame(Frames.events(20))
        let answer = try await collector.request(body: frame)
        #expect(answer.status == 413)
        #expect(answer.body.hasPrefix(#"{"error":"tooLarge","detail":"uncompressed_length at byte 12: "#))
    }

    @Test("415 for an unknown codec or version")
    func unsupported() async throws {
        let collector = try await CollectorProcess()
        var codec = try Frames.frame(Frames.events(2))
        codec[5] = 9
        let byCodec = try await collector.request(body: codec)
        #expect(byCodec.status == 415)
        #expect(byCodec.body == #"{"error":"unknownCodec","detail":"codec at byte 5: codec 9 is unknown"}"#)
        var version = try Frames.frame(Frames.events(2))
        version[4] = 2
        let byVersion = try await collector.request(body: version)
        #expect(byVersion.status == 415)
        #expect(byVersion.body == #"{"error":"unsupportedVersion","detail":"version at byte 4: version 2 is not supported"}"#)
    }

    @Test("401 without the right bearer token when tokens are configured")
    func tokens() async throws {
        let collector = try await CollectorProcess(arguments: ["--token", "alpha-0123456789abcdef", "--token", "beta-0123456789abcdef"])
        let frame = try Frames.frame(Frames.events(2))
        let missing = try await collector.request(body: frame)
        #expect(missing.status == 401)
        #expect(missing.body == #"{"error":"unauthorized","detail":"a valid Authorization: Bearer token is required"}"#)
        let wrong = try await collector.request(body: frame, headers: ["Authorization": "Bearer gamma-0123456789abcdef"])
        #expect(wrong.status == 401)
        let right = try await collector.request(body: frame, headers: ["Authorization": "Bearer beta-0123456789abcdef"])
        #expect(right.status == 200)
    }

    @Test("404 for an unknown path, 405 for a wrong method")
    func routing() async throws {
        let collector = try await CollectorProcess()
        let unknown = try await collector.request("GET", "/v2/nothing")
        #expect(unknown.status == 404)
        #expect(unknown.body.hasPrefix(#"{"error":"not_found","#))
        let method = try await collector.request("GET", "/v1/batch")
        #expect(method.status == 405)
        #expect(method.headers["allow"] == "POST")
    }

    @Test("503 with Retry-After when too many batches are in flight")
    func overloaded() async throws {
        let collector = try await CollectorProcess(arguments: ["--max-in-flight", "0"])
        let answer = try await collector.request(body: try Frames.frame(Frames.events(2)))
        #expect(answer.status == 503)
        #expect(answer.headers["retry-after"] == "1")
        #expect(answer.body == #"{"error":"overloaded","detail":"the collector is handling as much as it may; retry later"}"#)
    }

    @Test("/healthz answers 200 while the store answers; /metrics counts requests, events and duplicates")
    func healthAndMetrics() async throws {
        let collector = try await CollectorProcess()
        let health = try await collector.request("GET", "/healthz")
        #expect(health.status == 200)
        let frame = try Frames.frame(Frames.events(5))
        _ = try await collector.request(body: frame)
        _ = try await collector.request(body: frame)
        let metrics = try await collector.request("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains(#"spoor_collector_requests_total{status="200"} 2"#))
        #expect(metrics.body.contains("spoor_collector_events_stored_total 5"))
        #expect(metrics.body.contains("spoor_collector_duplicate_batches_total 1"))
        #expect(metrics.body.contains("spoor_collector_store_seconds_bucket"))
    }

    @Test("SIGTERM or SIGINT: the collector stops cleanly, its store closed, and what it answered 200 for is stored",
          arguments: [SIGTERM, SIGINT])
    func gracefulShutdown(signal: Int32) async throws {
        let collector = try await CollectorProcess()
        let answer = try await collector.request(body: try Frames.frame(Frames.events(4)))
        #expect(answer.status == 200)
        collector.signal(signal)
        #expect(try await collector.waitForExit() == 0)
        // Closing the last connection checkpoints the write-ahead log into the file and removes it.
        #expect(!FileManager.default.fileExists(atPath: collector.databasePath + "-wal"), "the SQLite store was not closed")
        #expect(try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +) == 4)
    }
}
