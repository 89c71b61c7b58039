import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SpoorCollectorTestSupport
import SpoorCollectorCore
import SpoorFaultProxy
import SpoorLoopback
import SpoorWire
import Testing

/// The proxy itself, in front of a real collector process, driven by plain URLSession requests.
@Suite("The fault-injecting proxy in front of a real collector", .timeLimit(.minutes(10)))
struct FaultProxyTests {
    @Test("forwarded batches reach the store; the proxy records path, headers and body size")
    func forwards() async throws {
        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port)
        let id = BatchID.random()
        let frame = try Frames.frame(Frames.events(anonymousID: "anon-f", sequences: 0..<5), batchID: id)
        let answer = try await Post.batch(frame, to: proxy.batchURL, batchID: id, retry: 2).get()
        #expect(answer.status == 200)
        #expect(answer.body.contains(#""duplicate":false"#))
        let seen = try await proxy.waitForRequests(1)
        #expect(seen.count == 1)
        #expect(seen[0].path == "/v1/batch" && seen[0].method == "POST")
        #expect(seen[0].batchID == "\(id)")
        #expect(seen[0].retryCount == 2)
        #expect(seen[0].bodyBytes == frame.count)
        #expect(seen[0].action == .forward && seen[0].upstreamStatus == 200)
        #expect(try StoreReading(path: collector.databasePath).pairCounts() == Dictionary(
            uniqueKeysWithValues: (0..<5).map { (Pair(anonymousID: "anon-f", sequence: $0), 1) }))
    }

    @Test("scripted statuses are answered in order without reaching the collector, then it forwards")
    func scriptedStatuses() async throws {
        let collector = try await CollectorProcess()
        let statuses: [FaultAction] = [
            .respond(status: 500), .respond(status: 503, headers: ["Retry-After": "2"]),
            .respond(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"]),
            .respond(status: 429, headers: ["Retry-After": "1"]), .respond(status: 408), .respond(status: 400),
            .respond(status: 401),
        ]
        let proxy = try FaultProxy(upstreamPort: collector.port, script: FaultScript(statuses))
        let frame = try Frames.frame(Frames.events(anonymousID: "anon-s", sequences: 0..<3))
        var answers: [(Int, String?)] = []
        for _ in 0..<statuses.count + 1 {
            let answer = try await Post.batch(frame, to: proxy.batchURL).get()
            answers.append((answer.status, answer.headers["retry-after"]))
        }
        #expect(answers.map(\.0) == [500, 503, 503, 429, 408, 400, 401, 200])
        #expect(answers.map(\.1) == [nil, "2", "Wed, 21 Oct 2026 07:28:00 GMT", "1", nil, nil, nil, nil])
        let seen = try await proxy.waitForRequests(statuses.count + 1)
        #expect(seen.map(\.action) == statuses + [.forward])
        #expect(seen.map(\.upstreamStatus) == Array(repeating: nil, count: statuses.count) + [200])
        #expect(try StoreReading(path: collector.databasePath).eventCount() == 3)
    }

    @Test("bodies above the limit get 413 and are not forwarded; smaller ones are")
    func tooLarge() async throws {
        let collector = try await CollectorProcess()
        let small = try Frames.frame(Frames.events(anonymousID: "anon-l", sequences: 0..<2))
        let large = try Frames.frame(Frames.events(anonymousID: "anon-l", sequences: 2..<400))
        let proxy = try FaultProxy(upstreamPort: collector.port, script: FaultScript(rejectBodiesAbove: small.count + 1))
        #expect(try await Post.batch(large, to: proxy.batchURL).get().status == 413)
        #expect(try await Post.batch(small, to: proxy.batchURL).get().status == 200)
        let seen = try await proxy.waitForRequests(2)
        #expect(seen.map(\.action) == [.respond(status: 413), .forward])
        #expect(try StoreReading(path: collector.databasePath).eventCount() == 2)
    }

    @Test("a reset mid-body is a network error for the client and stores nothing")
    func resetMidBody() async throws {
        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port, script: FaultScript([.resetMidBody]))
        let frame = try Frames.frame(Frames.events(anonymousID: "anon-r", sequences: 0..<2000))
        let result = await Post.batch(frame, to: proxy.batchURL)
        #expect(throws: (any Error).self) { try result.get() }
        let seen = try await proxy.waitForRequests(1)
        #expect(seen[0].action == .resetMidBody)
        #expect(seen[0].bodyBytes < frame.count)
        #expect(try StoreReading(path: collector.databasePath).eventCount() == 0)
        #expect(try await Post.batch(frame, to: proxy.batchURL).get().status == 200)
    }

    @Test("a stall outlasts the client's timeout; stopping the proxy ends it")
    func stall() async throws {
        let collector = try await CollectorProcess()
        // An hour: nothing but the client's own timeout (1 s) can end the request while the test looks.
        let proxy = try FaultProxy(upstreamPort: collector.port, script: FaultScript([.stall(.seconds(3600))]))
        let frame = try Frames.frame(Frames.events(anonymousID: "anon-t", sequences: 0..<3))
        let started = ContinuousClock.now
        let result = try await withDeadline(waitBound) { await Post.batch(frame, to: proxy.batchURL, timeout: 1) }
        let waited = ContinuousClock.now - started
        #expect(result.urlErrorCode == .timedOut, "the client's own timeout ended it: \(result)")
        #expect(waited >= .milliseconds(900), "after \(waited)")
        #expect(try await proxy.waitForRequests(1)[0].action == .stall(.seconds(3600)))
        #expect(try StoreReading(path: collector.databasePath).eventCount() == 0)
        proxy.stop()
    }

    @Test("a lost response: the collector stored the batch, the client heard nothing; the resend is a duplicate")
    func lostResponse() async throws {
        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port, script: FaultScript([.loseResponse]))
        let id = BatchID.random()
        let frame = try Frames.frame(Frames.events(anonymousID: "anon-d", sequences: 0..<4), batchID: id)
        await #expect(throws: (any Error).self) { try await Post.batch(frame, to: proxy.batchURL).get() }
        #expect(try await proxy.waitForRequests(1)[0].upstreamStatus == 200)
        #expect(try StoreReading(path: collector.databasePath).batchIDs() == ["\(id)"])
        let again = try await Post.batch(frame, to: proxy.batchURL).get()
        #expect(again.status == 200 && again.body.contains(#""duplicate":true"#))
        #expect(try StoreReading(path: collector.databasePath).pairCounts().values.allSatisfy { $0 == 1 })
        #expect(try StoreReading(path: collector.databasePath).eventCount() == 4)
    }

    @Test("while the collector is down the proxy answers 502; after a restart on a new port it forwards again")
    func collectorRestart() async throws {
        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port)
        let first = try Frames.frame(Frames.events(anonymousID: "anon-c", sequences: 0..<2))
        #expect(try await Post.batch(first, to: proxy.batchURL).get().status == 200)
        try await collector.stop(kill: true)
        proxy.upstreamPort = nil
        let second = try Frames.frame(Frames.events(anonymousID: "anon-c", sequences: 2..<4))
        #expect(try await Post.batch(second, to: proxy.batchURL).get().status == 502)
        proxy.upstreamPort = try await collector.start()
        #expect(try await Post.batch(second, to: proxy.batchURL).get().status == 200)
        #expect(try StoreReading(path: collector.databasePath).eventCount() == 4)
        #expect(proxy.requests.map(\.upstreamStatus) == [200, nil, 200])
    }
}

extension Result {
    /// The URL error code, when it failed with a URL error.
    var urlErrorCode: URLError.Code? {
        if case .failure(let error) = self { return (error as? URLError)?.code }
        return nil
    }
}
