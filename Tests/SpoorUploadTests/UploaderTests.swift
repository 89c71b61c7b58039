import Foundation
import Logging
import SpoorModel
import SpoorWire
import SpoorTestSupport
import SpoorTesting
import Testing
import SpoorUpload
import SpoorSystem
import SpoorLog

/// A random source that always gives the same word: `.max` draws the top of the jitter range, `0` the bottom.
struct FixedRandom: RandomNumberGenerator, Sendable {
    var word: UInt64
    mutating func next() -> UInt64 { word }
}

/// A log with events, an uploader over a scripted client and a manual clock.
///
/// One batch in flight unless a test asks for more: most tests script answers in request order, which a window
/// would interleave (the window's own rules are tested on ``UploadStateMachine`` alone).
final class UploadHarness {
    let directory = TemporaryDirectory()
    let log: EventLog
    let client: ScriptedHTTPClient
    let clock = ManualClock()
    let capture = LogCapture()
    let uploader: Uploader

    init(events: Int, client: ScriptedHTTPClient = ScriptedHTTPClient(), batchSize: Int = 100, token: String? = "secret",
         random: any RandomNumberGenerator & Sendable = FixedRandom(word: .max), rejectedLimits: RejectedArea.Limits = .init(),
         policy: UploadPolicy = .always, flushInterval: Duration? = nil, maxBatchesInFlight: Int = 1) throws {
        self.client = client
        log = try EventLog(directory: directory.url, configuration: EventLog.Configuration(durability: .none), logger: capture.logger)
        if events > 0 { log.append(SequencedEvents.buffer(0..<events)) }
        var configuration = UploadConfiguration(url: URL(string: "http://collector.test/v1/batch")!, token: token)
        configuration.client = client
        configuration.clock = clock
        configuration.random = random
        configuration.batchSize = batchSize
        configuration.flushInterval = flushInterval
        configuration.networkMonitor = nil
        configuration.rejectedLimits = rejectedLimits
        configuration.policy = policy
        configuration.maxBatchesInFlight = maxBatchesInFlight
        uploader = try Uploader(log: log, configuration: configuration, logger: capture.logger)
    }

    /// The sequence numbers each request carried, in request order.
    func sequencesSent() throws -> [[Int]] {
        try client.requests.map { request in
            try SequencedEvents.sequences(inBatch: FrameDecoder().decode(request.body).payload)
        }
    }

    func pendingEvents() -> Int {
        log.recordCount + log.pendingBatches().reduce(0) { $0 + $1.recordCount }
    }

    /// Returns once a pass of the upload loop begun after the call is over (it wakes the loop as a trigger does,
    /// which cuts no backoff or pause short): what the loop does in reaction to what came before has happened.
    func nextPass() async -> Bool {
        await uploader.nextPass(timeout: testBound)
    }
}

@Suite struct BackoffTests {
    @Test func ceilingsDoubleFromOneSecondUpToFiveMinutes() {
        let backoff = Backoff()
        let ceilings = (1...12).map { backoff.ceiling(afterFailures: $0) }
        #expect(ceilings == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
        #expect(backoff.ceiling(afterFailures: 10_000) == .seconds(300))
        #expect(backoff.ceiling(afterFailures: 0) == .zero)
    }

    @Test func delaysAreFullJitterWithinTheCeiling() {
        let backoff = Backoff()
        var random = SplitMix64(seed: 42)
        for failures in 1...12 {
            let ceiling = backoff.ceiling(afterFailures: failures)
            let delays = (0..<2000).map { _ in backoff.delay(afterFailures: failures, using: &random) }
            #expect(delays.allSatisfy { $0 >= .zero && $0 <= ceiling })
            // Full jitter: the whole range is used, not just the top.
            #expect(delays.min()! < ceiling / 20)
            #expect(delays.max()! > ceiling * 19 / 20)
        }
        var top = FixedRandom(word: .max)
        #expect(backoff.delay(afterFailures: 3, using: &top) == .seconds(4))
        var bottom = FixedRandom(word: 0)
        #expect(backoff.delay(afterFailures: 3, using: &bottom) == .zero)
    }
}

@Suite struct RetryAfterTests {
    let now: Int64 = 1_445_412_480_000  // Wed, 21 Oct 2015 07:28:00 GMT

    @Test func secondsForm() {
        #expect(RetryAfter.parse("120", nowMilliseconds: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", nowMilliseconds: now) == .zero)
        #expect(RetryAfter.parse("7200", nowMilliseconds: now) == .seconds(3600))
        #expect(RetryAfter.parse("99999999999999999999999", nowMilliseconds: now) == .seconds(3600))
    }

    @Test func dateForms() {
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:30 GMT", nowMilliseconds: now) == .seconds(30))
        #expect(RetryAfter.parse("Wednesday, 21-Oct-15 07:29:00 GMT", nowMilliseconds: now) == .seconds(60))
        #expect(RetryAfter.parse("Wed Oct 21 07:28:10 2015", nowMilliseconds: now) == .seconds(10))
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:00:00 GMT", nowMilliseconds: now) == .zero)
        #expect(RetryAfter.parse("Thu, 22 Oct 2015 07:28:00 GMT", nowMilliseconds: now) == .seconds(3600))
    }

    @Test func garbageIsNil() {
        for text in ["", "soon", "-5", "1.5", "Wed, 99 Foo 2015"] {
            #expect(RetryAfter.parse(text, nowMilliseconds: now) == nil, "\(text)")
        }
    }
}

@Suite struct UploaderTests {
    @Test func deliversBatchesInOrderOneAtATimeWithHeaders() async throws {
        let h = try UploadHarness(events: 250)
        h.uploader.start(sendingLeftovers: false)
        let result = await h.uploader.flush()
        #expect(result.deliveredBatches == 3)
        #expect(result.deliveredEvents == 250)
        #expect(result.pendingReason == nil)
        #expect(result.isComplete)
        #expect(try h.sequencesSent() == [Array(0..<100), Array(100..<200), Array(200..<250)])
        #expect(h.client.maxConcurrentRequests == 1)
        for request in h.client.requests {
            let header = try FrameDecoder().decodeHeader(request.body)
            #expect(request.method == "POST")
            #expect(request.url.absoluteString == "http://collector.test/v1/batch")
            #expect(request.header("content-type") == "application/x-spoor-batch")
            #expect(request.header("Spoor-Batch-Id") == header.batchID.description)
            #expect(request.header("Authorization") == "Bearer secret")
            #expect(request.header("Spoor-Retry-Count") == nil)
            #expect(request.header("User-Agent")?.hasPrefix("Spoor/\(SpoorVersion.current) (") == true)
            #expect(request.timeout == .seconds(30))
        }
        #expect(h.pendingEvents() == 0)
        let counters = h.uploader.counters
        #expect(counters.deliveredBatches == 3)
        #expect(counters.deliveredEvents == 250)
        #expect(counters.deliveredBytes == h.client.requests.reduce(0) { $0 + $1.body.count })
        #expect(counters.lastStatus == 200)
        #expect(counters.state == .idle)
        await h.uploader.stop()
        #expect(h.uploader.counters.state == .stopped)
    }

    @Test func aWindowKeepsSeveralBatchesOnTheWireAndReleasesThemInOrder() async throws {
        // The first request stalls; the next three are answered at once but must wait for it to leave the outbox.
        let client = ScriptedHTTPClient([.stall])
        let h = try UploadHarness(events: 250, client: client, batchSize: 50, maxBatchesInFlight: 4)
        h.uploader.start()
        #expect(await h.client.requests(atLeast: 4))
        #expect(h.client.maxConcurrentRequests >= 2)
        // The stalled request times out after 30 s; the retry waits the first backoff (1 s) as a lone probe.
        #expect(await h.clock.sleeper(exactly: .seconds(30)))
        h.clock.advance(by: .seconds(30))
        #expect(await h.clock.sleeper(exactly: .seconds(1)))
        #expect(h.client.requests.count == 4)
        // Delivered or not, nothing left the outbox ahead of the first batch.
        #expect(h.log.pendingBatches().count == 4)
        #expect(h.uploader.counters.deliveredBatches == 0)
        h.clock.advance(by: .seconds(1))
        let result = await h.uploader.flush()
        #expect(result.isComplete, "\(result)")
        #expect(result.deliveredEvents == 250)
        let ids = h.client.requests.map { $0.header("Spoor-Batch-Id")! }
        #expect(ids.count == 6)
        #expect(ids[4] == ids[0])
        #expect(h.client.requests[4].header("Spoor-Retry-Count") == "1")
        #expect(Set(ids).count == 5)
        // Every event exactly once, in order, over the requests that got an answer.
        let delivered = try h.client.requests.enumerated().filter { $0.offset != 0 }.map { try SequencedEvents.sequences(inBatch: FrameDecoder().decode($0.element.body).payload) }
        #expect(delivered.flatMap { $0 }.sorted() == Array(0..<250))
        await h.uploader.stop()
    }

    @Test func aStallPastTheIntervalAndTheFlushTimeoutIsRetried() async throws {
        // One clock step passes the flush interval, a flush's timeout and the stalled request's timeout at once.
        let client = ScriptedHTTPClient([.stall])
        let h = try UploadHarness(events: 60, client: client, flushInterval: .seconds(15), maxBatchesInFlight: 4)
        h.uploader.start(sendingLeftovers: false)
        let uploader = h.uploader
        async let flushing = uploader.flush(timeout: .seconds(60))
        #expect(await h.client.requests(atLeast: 1))
        // The request's timeout is asleep on the clock (asked for is not enough: a sleep is asked for before it
        // is registered, and a step in between would not wake it).
        #expect(await h.clock.sleeper(exactly: .seconds(30)))
        h.log.append(SequencedEvents.buffer(60..<100))
        h.clock.advance(by: .seconds(599))
        _ = await flushing
        h.clock.advance(by: .seconds(600))
        #expect(await h.client.requests(atLeast: 2))
        let result = await h.uploader.flush()
        #expect(result.isComplete, "\(result)")
        #expect(h.uploader.counters.deliveredEvents == 100)
        await h.uploader.stop()
    }

    @Test func theFlushIntervalRunsOnlyWhileTheAppIsStarted() async throws {
        let h = try UploadHarness(events: 0, flushInterval: .seconds(15))
        h.uploader.start(sendingLeftovers: false)
        // Started (the default): the uploader looks again after the interval.
        #expect(await h.clock.sleeper(exactly: .seconds(15)))
        h.uploader.setIntervalActive(false)
        let mark = h.clock.sleepCount
        h.log.append(SequencedEvents.buffer(0..<5))
        // A trigger (the end's upload) sends what waits; afterwards nothing wakes the uploader but a trigger.
        h.uploader.trigger()
        #expect(await h.client.requests(atLeast: 1))
        // Once a later pass is over, every sleep the loop asked for since the trigger is known, and none is the
        // interval (had it kept the interval, it would have slept on it between the two passes).
        #expect(await h.nextPass())
        #expect(!h.clock.requested.dropFirst(mark).contains(.seconds(15)))
        #expect(h.client.requests.count == 1)
        h.log.append(SequencedEvents.buffer(5..<8))
        // Started again: an upload at once, then the interval again.
        h.uploader.setIntervalActive(true)
        #expect(await h.client.requests(atLeast: 2))
        #expect(await h.clock.sleeper(exactly: .seconds(15)))
        #expect(try h.sequencesSent() == [Array(0..<5), Array(5..<8)])
        await h.uploader.stop()
    }

    @Test func noTokenNoAuthorizationHeader() async throws {
        let h = try UploadHarness(events: 5, token: nil)
        h.uploader.start(sendingLeftovers: false)
        _ = await h.uploader.flush()
        #expect(h.client.requests.count == 1)
        #expect(h.client.requests[0].header("Authorization") == nil)
        await h.uploader.stop()
    }

    @Test func failuresBackOffWithGrowingCeilingAndCountRetries() async throws {
        let client = ScriptedHTTPClient([.respond(503), .respond(500), .fail(HTTPClientError(.network, reason: "reset")), .respond(408)])
        let h = try UploadHarness(events: 40, client: client)
        h.uploader.start()
        // FixedRandom(.max) draws the ceiling: 1 s, 2 s, 4 s, 8 s.
        for (attempt, ceiling) in [1, 2, 4, 8].enumerated() {
            #expect(await h.client.requests(atLeast: attempt + 1))
            #expect(await h.clock.sleeper(exactly: .seconds(ceiling)))
            #expect(h.uploader.counters.state == .backingOff)
            #expect(h.uploader.counters.nextAttemptAt == h.clock.wallMilliseconds() + Int64(ceiling) * 1000)
            // A trigger does not cut the backoff short: no request before the time is up, once the loop has
            // looked again.
            h.uploader.trigger()
            #expect(await h.nextPass())
            #expect(h.client.requests.count == attempt + 1)
            #expect(await h.clock.sleeper(exactly: .seconds(ceiling)))
            h.clock.advance(by: .seconds(ceiling))
        }
        #expect(await h.client.requests(atLeast: 5))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.deliveredBatches == 1)
        let retries = h.client.requests.map { $0.header("Spoor-Retry-Count") }
        #expect(retries == [nil, "1", "2", "3", "4"])
        // The same batch id every time.
        #expect(Set(h.client.requests.map { $0.header("Spoor-Batch-Id") }).count == 1)
        let counters = h.uploader.counters
        #expect(counters.retries == 4)
        #expect(counters.requests == 5)
        #expect(counters.nextAttemptAt == nil)
        // One warning for the failing spell and one notice for the recovery, not one per retry.
        #expect(h.capture.all.filter { $0.message.contains("an upload failed") }.count == 1)
        #expect(h.capture.contains(.notice, "uploads succeed again"))
        await h.uploader.stop()
    }

    @Test func retryAfterSecondsPausesTheWholeUploader() async throws {
        let client = ScriptedHTTPClient([.respond(429, headers: ["Retry-After": "120"])])
        let h = try UploadHarness(events: 250, client: client, random: FixedRandom(word: 0))
        h.uploader.start()
        #expect(await h.client.requests(atLeast: 1))
        #expect(await h.clock.sleeper(exactly: .seconds(120)))
        #expect(h.uploader.counters.state == .pausedByServer)
        #expect(h.uploader.counters.nextAttemptAt == h.clock.wallMilliseconds() + 120_000)
        // Even a flush waits out the server's pause: no request, and it says why.
        let during = await h.uploader.flush()
        #expect(during.pendingReason == .pausedByServer(until: h.clock.wallMilliseconds() + 120_000))
        #expect(during.pendingEvents == 250)
        #expect(h.client.requests.count == 1)
        h.clock.advance(by: .seconds(119))
        // Nor does a trigger: the loop looks again and still waits.
        #expect(await h.nextPass())
        #expect(h.client.requests.count == 1)
        #expect(await h.clock.sleeper(exactly: .seconds(1)))
        h.clock.advance(by: .seconds(1))
        #expect(await h.client.requests(atLeast: 4))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.deliveredEvents == 250)
        #expect(h.uploader.counters.serverPauses == 1)
        await h.uploader.stop()
    }

    @Test func retryAfterDateAndTheOneHourCap() async throws {
        let clock = ManualClock()
        let date = Date(timeIntervalSince1970: Double(clock.wallMilliseconds()) / 1000 + 90)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let client = ScriptedHTTPClient([
            .respond(503, headers: ["Retry-After": formatter.string(from: date)]),
            .respond(503, headers: ["retry-after": "86400"]),
        ])
        let h = try UploadHarness(events: 10, client: client, random: FixedRandom(word: 0))
        h.uploader.start()
        #expect(await h.client.requests(atLeast: 1))
        #expect(await h.clock.sleeper(exactly: .seconds(90)))
        h.clock.advance(by: .seconds(90))
        #expect(await h.client.requests(atLeast: 2))
        #expect(await h.clock.sleeper(exactly: .seconds(3600)))
        h.clock.advance(by: .seconds(3600))
        #expect(await h.client.requests(atLeast: 3))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.deliveredEvents == 10)
        await h.uploader.stop()
    }

    @Test func unauthorizedPausesUntilANewToken() async throws {
        let client = ScriptedHTTPClient([.respond(401, body: #"{"error":"unauthorized","reason":"bad token"}"#)])
        let h = try UploadHarness(events: 30, client: client)
        h.uploader.start()
        #expect(await h.client.requests(atLeast: 1))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.state == .pausedForAuthorization)
        // Triggers and time do nothing while paused: the credentials are wrong, not the data.
        for _ in 0..<5 { h.uploader.trigger() }
        h.clock.advance(by: .seconds(7200))
        #expect(await h.nextPass())
        #expect(h.clock.sleeperCount == 0)
        #expect(h.client.requests.count == 1)
        #expect(h.pendingEvents() == 30)
        #expect(h.capture.all.filter { $0.message.contains("refused the credentials") }.count == 1)
        #expect(h.uploader.counters.authorizationPauses == 1)
        h.uploader.setToken("fresh")
        #expect(await h.client.requests(atLeast: 2))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.deliveredEvents == 30)
        #expect(h.client.requests[1].header("Authorization") == "Bearer fresh")
        await h.uploader.stop()
    }

    @Test func forbiddenPausesUntilFlush() async throws {
        let client = ScriptedHTTPClient([.respond(403)])
        let h = try UploadHarness(events: 30, client: client)
        h.uploader.start()
        #expect(await h.client.requests(atLeast: 1))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.state == .pausedForAuthorization)
        let result = await h.uploader.flush()
        #expect(result.deliveredEvents == 30)
        #expect(result.isComplete)
        #expect(h.client.requests.count == 2)
        await h.uploader.stop()
    }

    @Test func payloadTooLargeSplitsIntoHalvesWithDerivedIDs() async throws {
        // The "collector" takes at most 25 events per request.
        let client = ScriptedHTTPClient(otherwise: .handle { request in
            let count = (try? FrameDecoder().decodeHeader(request.body).recordCount) ?? 0
            return HTTPResponse(status: count > 25 ? 413 : 200)
        })
        let h = try UploadHarness(events: 100, client: client)
        let parent = try #require(try h.log.seal(maxRecords: 100))
        h.uploader.start(sendingLeftovers: false)
        let result = await h.uploader.flush()
        #expect(result.deliveredEvents == 100)
        #expect(result.deliveredBatches == 4)
        let ids = h.client.requests.map { $0.header("Spoor-Batch-Id")! }
        let a = parent.id.derived(index: 0), b = parent.id.derived(index: 1)
        #expect(ids == [parent.id, a, a.derived(index: 0), a.derived(index: 1), b, b.derived(index: 0), b.derived(index: 1)]
            .map(\.description))
        // Delivered exactly once, in order.
        let delivered = try h.client.requests.filter { try FrameDecoder().decodeHeader($0.body).recordCount <= 25 }.map { request in
            try SequencedEvents.sequences(inBatch: FrameDecoder().decode(request.body).payload)
        }
        #expect(delivered.flatMap { $0 } == Array(0..<100))
        #expect(h.uploader.counters.splits == 3)
        #expect(h.uploader.counters.retries == 0)
        await h.uploader.stop()
    }

    @Test func aSplitIsDeterministicAndSurvivesARestart() throws {
        let directory = TemporaryDirectory()
        var log: EventLog? = try EventLog(directory: directory.url, configuration: .init(durability: .always))
        log!.append(SequencedEvents.buffer(0..<11))
        let parent = try #require(try log!.seal(maxRecords: 11))
        let frame = try log!.frame(of: parent.id)
        let once = try #require(try BatchSplit.halves(of: frame))
        let twice = try #require(try BatchSplit.halves(of: frame))
        #expect(once == twice)
        let headers = try once.map { try FrameDecoder().decodeHeader($0) }
        #expect(headers.map(\.batchID) == [parent.id.derived(index: 0), parent.id.derived(index: 1)])
        #expect(headers.map(\.recordCount) == [5, 6])
        #expect(headers.allSatisfy { $0.sealedAt == parent.sealedAt && $0.codec == parent.codec })
        try log!.replace(parent.id, withFrames: once)
        #expect(log!.pendingBatches().map(\.id) == headers.map(\.batchID))
        log!.close()
        log = nil
        // After a restart the outbox holds the halves, in order, under the same ids.
        let reopened = try EventLog(directory: directory.url, configuration: .init(durability: .always))
        #expect(reopened.pendingBatches().map(\.id) == headers.map(\.batchID))
        let sequences = try reopened.pendingBatches().flatMap { batch in
            try SequencedEvents.sequences(inBatch: FrameDecoder().decode(reopened.frame(of: batch.id)).payload)
        }
        #expect(sequences == Array(0..<11))
        // A single event cannot be split.
        reopened.append(SequencedEvents.buffer(11..<12))
        try reopened.release(headers[0].batchID)
        try reopened.release(headers[1].batchID)
        let single = try #require(try reopened.seal())
        #expect(try BatchSplit.halves(of: reopened.frame(of: single.id)) == nil)
    }

    @Test func aSingleEventStillTooLargeIsSetAside() async throws {
        let client = ScriptedHTTPClient(otherwise: .respond(413, body: #"{"error":"too_large"}"#))
        let h = try UploadHarness(events: 2, client: client)
        h.uploader.start(sendingLeftovers: false)
        let result = await h.uploader.flush()
        #expect(result.rejectedBatches == 2)
        #expect(result.pendingEvents == 0)
        #expect(h.client.requests.count == 3)
        let summary = h.uploader.rejected.summary()
        #expect(summary.entries.map(\.status) == [413, 413])
        #expect(h.uploader.counters.rejectedEvents == 2)
        #expect(h.log.counters.rejected == 2)
        await h.uploader.stop()
    }

    @Test func otherClientErrorsGoToABoundedRejectedArea() async throws {
        let client = ScriptedHTTPClient(otherwise: .respond(400, body: #"{"error":"malformed_frame","reason":"bad crc"}"#))
        let h = try UploadHarness(events: 50, client: client, batchSize: 10, rejectedLimits: .init(maxBatches: 3, maxBytes: 1 << 20))
        h.uploader.start(sendingLeftovers: false)
        let result = await h.uploader.flush()
        #expect(result.rejectedBatches == 5)
        #expect(result.deliveredBatches == 0)
        #expect(h.pendingEvents() == 0)
        try #require(h.client.requests.count == 5)
        let summary = h.uploader.rejected.summary()
        #expect(summary.entries.count == 3)
        #expect(summary.dropped == 2)
        // The oldest were dropped: the three kept are the last three sent.
        #expect(summary.entries.map(\.id) == h.client.requests.suffix(3).map { $0.header("Spoor-Batch-Id")! })
        // Each kept file is the frame, byte for byte.
        let kept = try Data(contentsOf: h.uploader.rejected.directory.appendingPathComponent(summary.entries[2].file))
        #expect(Array(kept) == h.client.requests[4].body)
        let counters = h.uploader.counters
        #expect(counters.rejectedBatches == 5)
        #expect(counters.rejectedEvents == 50)
        #expect(counters.rejectedDropped == 2)
        // Never silent: every batch set aside and the drop are logged, with the collector's reason.
        #expect(h.capture.all.filter { $0.message.contains("refused a batch") }.count == 5)
        #expect(h.capture.contains(.error, "reason=bad crc"))
        #expect(h.capture.contains(.error, "rejected area is full"))
        // The bytes bound too.
        try FileManager.default.createDirectory(at: h.directory.file("other"), withIntermediateDirectories: true)
        let small = try RejectedArea(logDirectory: h.directory.file("other"), limits: .init(maxBatches: 100, maxBytes: 2048))
        for index in 0..<5 {
            try small.setAside(frame: [UInt8](repeating: UInt8(index), count: 1000), id: .random(), status: 400, at: Int64(index))
        }
        #expect(small.summary().entries.count == 2)
        #expect(small.summary().dropped == 3)
        await h.uploader.stop()
    }

    @Test func aRequestPastItsTimeoutIsRetried() async throws {
        let client = ScriptedHTTPClient([.stall])
        let h = try UploadHarness(events: 10, client: client)
        h.uploader.start()
        #expect(await h.client.requests(atLeast: 1))
        #expect(await h.clock.sleeper(exactly: .seconds(30)))
        h.clock.advance(by: .seconds(30))
        #expect(await h.clock.sleeper(exactly: .seconds(1)))
        #expect(h.uploader.counters.timeouts == 1)
        #expect(h.uploader.counters.state == .backingOff)
        h.clock.advance(by: .seconds(1))
        #expect(await h.client.requests(atLeast: 2))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.deliveredEvents == 10)
        #expect(h.client.requests[1].header("Spoor-Retry-Count") == "1")
        await h.uploader.stop()
    }

    @Test func stopAbandonsAStalledRequestAndEndsWaitingFlushes() async throws {
        let client = ScriptedHTTPClient([.stall])
        let h = try UploadHarness(events: 10, client: client)
        h.uploader.start()
        let flush = Task { await h.uploader.flush() }
        #expect(await h.client.requests(atLeast: 1))
        // The stalled request never ends by itself (its timeout is on the manual clock, which stands still), so
        // a stop that waited for it would never return: the bound makes that a failure instead of a hang.
        let uploader = h.uploader
        let stopped: Void? = await finished { await uploader.stop() }
        #expect(stopped != nil, "stop() waited for the stalled request")
        let result = try #require(await finished { await flush.value })
        #expect(result.pendingReason == .stopped)
        #expect(result.pendingEvents == 10)
        // The batch is still in the outbox for the next launch.
        #expect(h.log.pendingBatches().count == 1)
        #expect(await h.uploader.flush().pendingReason == .stopped)
    }

    @Test func aFlushCutsTheBackoffShortAndReportsWhatIsPending() async throws {
        let client = ScriptedHTTPClient([.respond(500), .respond(502)])
        let h = try UploadHarness(events: 150, client: client)
        h.uploader.start(sendingLeftovers: false)
        let first = await h.uploader.flush()
        #expect(first.deliveredBatches == 0)
        #expect(first.pendingEvents == 150)
        guard case .backingOff(_, let error) = first.pendingReason else {
            Issue.record("expected backingOff, got \(String(describing: first.pendingReason))")
            return
        }
        #expect(error.hasPrefix("500"))
        let second = await h.uploader.flush()
        #expect(h.client.requests.count == 2)
        #expect(second.pendingEvents == 150)
        let third = await h.uploader.flush()
        #expect(third.deliveredBatches == 2)
        #expect(third.deliveredEvents == 150)
        #expect(third.isComplete)
        await h.uploader.stop()
    }

    @Test func thePolicyHoldsUploadsBack() async throws {
        let allowed = Locked(false)
        let h = try UploadHarness(events: 10, policy: .custom { _ in allowed.withLock { $0 } })
        h.uploader.start(sendingLeftovers: false)
        let held = await h.uploader.flush()
        #expect(held.pendingReason == .policy("custom"))
        #expect(h.client.requests.isEmpty)
        #expect(h.uploader.counters.state == .waitingForPolicy)
        allowed.withLock { $0 = true }
        #expect(await h.uploader.flush().deliveredEvents == 10)
        // A network that is down holds uploads whatever the policy; its return retries at once.
        h.log.append(SequencedEvents.buffer(10..<20))
        h.uploader.networkChanged(NetworkStatus(isAvailable: false))
        #expect(await h.uploader.flush().pendingReason == .policy("custom"))
        h.uploader.networkChanged(NetworkStatus(isAvailable: true))
        #expect(await h.client.requests(atLeast: 2))
        #expect(await h.nextPass())
        #expect(h.uploader.counters.deliveredEvents == 20)
        #expect(UploadPolicy.unmeteredOnly.allowsUpload(NetworkStatus(isAvailable: true, isExpensive: true)) == false)
        #expect(UploadPolicy.unmeteredOnly.allowsUpload(.unknown))
        await h.uploader.stop()
    }

    @Test func countersSurviveARestart() async throws {
        let h = try UploadHarness(events: 20)
        h.uploader.start(sendingLeftovers: false)
        _ = await h.uploader.flush()
        await h.uploader.stop()
        let saved = try #require(Uploader.savedCounters(logDirectory: h.directory.url))
        #expect(saved.deliveredEvents == 20)
        #expect(saved.state == .stopped)
        // The log directory stays clean for its own recovery: upload.json and rejected/ are its own.
        let report = try EventLog.inspect(directory: h.directory.url)
        #expect(report.foreign.isEmpty)
    }
}
