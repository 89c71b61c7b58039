import Foundation
import SpoorModel
import SpoorWire
import SpoorTestSupport
import SpoorLog
import SpoorTesting
import SpoorSystem
import Testing

import SpoorTracker

/// A tracker on the durable log with a server URL, a scripted HTTP client and a manual upload clock.
struct UploadingTracker {
    let directory = TemporaryDirectory()
    let client: ScriptedHTTPClient
    let clock = ManualClock()
    let logs = LogCapture()
    let tracker: Tracker

    init(client: ScriptedHTTPClient = ScriptedHTTPClient(), configure: (inout Configuration) -> Void = { _ in }) throws {
        self.client = client
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.upload.serverURL = URL(string: "http://collector.test")
        configuration.upload.token = "t0ken"
        configuration.upload.httpClient = client
        configuration.clock = clock
        configuration.uploadRandom = SplitMix64(seed: 7)
        configuration.storage.durability = .none
        configuration.tracking.presetOverrides = testPresets
        configuration.diagnostics.logger = logs.logger
        configure(&configuration)
        tracker = try Tracker(configuration: configuration)
    }

    /// The sequence numbers of the events every request carried, in request order.
    func sequencesSent() throws -> [UInt64] {
        try client.requests.flatMap { request in
            try EventDecoder().decodeBatch(FrameDecoder().decode(request.body).payload).map(\.sequence)
        }
    }
}

@Suite struct UploadTrackerTests {
    @Test func nothingIsUploadedWhileOptedOutAndWhatWaitsGoesOnceOptedIn() async throws {
        let u = try UploadingTracker()
        // The launch's look at leftovers is done (it would send what it found): the uploader waits out its interval.
        #expect(await u.clock.sleeper(within: .seconds(15)))
        for n in 0..<20 { u.tracker.track("BeforeOptOut", properties: ["n": .int(Int64(n))]) }
        _ = await u.tracker.optOut()
        let whileOut = await u.tracker.flush()
        #expect(whileOut.pendingReason == .optedOut, "\(whileOut)")
        #expect(u.client.requests.isEmpty)
        #expect(u.tracker.counters.upload?.state == .pausedForConsent)
        u.tracker.optIn()
        let after = await u.tracker.flush()
        #expect(after.isComplete, "\(after)")
        #expect(try u.sequencesSent().count == 20)
    }

    @Test func optingOutWithDeletionSendsNothingBeforeErasing() async throws {
        let u = try UploadingTracker()
        // The launch's look at leftovers is done (it would seal what the writer had stored by then): the uploader
        // waits out its interval, and 20 events stay below the bulk size, so nothing seals them.
        #expect(await u.clock.sleeper(within: .seconds(15)))
        for n in 0..<20 { u.tracker.track("Private", properties: ["n": .int(Int64(n))]) }
        let erased = await u.tracker.optOut(deleteStoredData: true)
        // Every one of the 20 events was erased, wherever it was (no batch was sealed: no upload ran after launch).
        #expect(erased.pendingEvents + erased.records == 20, "\(erased)")
        #expect(erased.batches == 0)
        #expect(u.client.requests.isEmpty)
        u.tracker.optIn()
        #expect(await u.tracker.flush().pendingEvents == 0)
        #expect(u.client.requests.isEmpty)
    }

    @Test func aStoreWithoutADurableLogRefusesAServerURL() throws {
        var configuration = Configuration(storageDirectory: TemporaryDirectory().url)
        configuration.upload.serverURL = URL(string: "http://collector.test")
        #expect(throws: ConfigurationError.self) { try Tracker(configuration: configuration, store: InMemoryEventStore()) }
    }

    @Test func flushDeliversEverythingTrackedAndSaysSo() async throws {
        let u = try UploadingTracker()
        for n in 0..<250 { u.tracker.track("Tap", properties: ["n": .int(Int64(n))]) }
        let result = await u.tracker.flush()
        // Reaching the bulk size uploaded some before the flush; the flush sent the rest.
        #expect(result.isComplete, "\(result)")
        #expect(result.pendingEvents == 0)
        let sent = try u.sequencesSent()
        #expect(sent.count == 250)
        #expect(sent == Array(sent[0]..<sent[0] + 250))
        #expect(u.client.maxConcurrentRequests == 1)
        let request = try #require(u.client.requests.first)
        // The origin given gets the collector's batch path.
        #expect(request.url.absoluteString == "http://collector.test/v1/batch")
        #expect(request.header("Authorization") == "Bearer t0ken")
        #expect(request.header("User-Agent")?.hasPrefix("Spoor/0.1.0 (") == true)
        let counters = try #require(u.tracker.counters.upload)
        #expect(counters.deliveredEvents == 250)
        #expect(counters.lastStatus == 200)
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    @Test func withoutAServerFlushSaysEventsStayLocal() async throws {
        let h = try Harness()
        h.tracker.track("Tap")
        let result = await h.tracker.flush()
        #expect(result.pendingReason == .noServer)
        #expect(h.tracker.counters.upload == nil)
        #expect(h.store.events.count == 1)
    }

    @Test func reachingTheBulkSizeUploadsWithoutAFlush() async throws {
        let u = try UploadingTracker { $0.upload.flushBulkSize = 10 }
        for n in 0..<10 { u.tracker.track("Tap", properties: ["n": .int(Int64(n))]) }
        #expect(await u.client.requests(atLeast: 1))
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    @Test func theFlushIntervalUploadsWhatWaits() async throws {
        let u = try UploadingTracker { $0.upload.flushInterval = .seconds(2) }
        // The launch's look at leftovers is done: the uploader waits out its interval.
        #expect(await u.clock.sleeper(within: .seconds(2)))
        let triggers = try #require(u.tracker.uploader).triggerCount
        for _ in 0..<5 { u.tracker.track("Tap") }
        // Stored, below the bulk size: nothing asked the uploader for an upload (a store that did would have
        // counted the trigger before returning), so nothing is sent before the interval is up.
        #expect(await u.tracker.stored())
        #expect(u.tracker.uploader?.triggerCount == triggers)
        #expect(u.client.requests.isEmpty)
        u.clock.advance(by: .seconds(2))
        try #require(await u.client.requests(atLeast: 1))
        let sent = try EventDecoder().decodeBatch(FrameDecoder().decode(u.client.requests[0].body).payload)
        #expect(sent.count == 5)
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    @Test func loginTriggersAnUpload() async throws {
        let u = try UploadingTracker()
        u.tracker.track("Browse")
        u.tracker.login("user-1")
        try #require(await u.client.requests(atLeast: 1))
        let sent = try EventDecoder().decodeBatch(FrameDecoder().decode(u.client.requests[0].body).payload)
        #expect(sent.map(\.name).contains("Browse"))
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    @Test func leftoversOfAnEarlierLaunchGoAtStart() async throws {
        let directory = TemporaryDirectory()
        do {
            var configuration = Configuration(storageDirectory: directory.url)
            configuration.storage.durability = .always
            let offline = try Tracker(configuration: configuration)
            for _ in 0..<5 { offline.track("Early") }
            #expect(await offline.shutdown(timeout: testBound))
        }
        let client = ScriptedHTTPClient()
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.upload.serverURL = URL(string: "http://collector.test/v1/batch")
        configuration.upload.httpClient = client
        configuration.clock = ManualClock()
        let tracker = try Tracker(configuration: configuration)
        try #require(await client.requests(atLeast: 1))
        let sent = try EventDecoder().decodeBatch(FrameDecoder().decode(client.requests[0].body).payload)
        #expect(sent.map(\.name) == Array(repeating: "Early", count: 5))
        #expect(await tracker.shutdown(timeout: testBound))
    }

    @Test func aFailingFlushReportsPendingAndWhy() async throws {
        let client = ScriptedHTTPClient([.respond(503, body: #"{"error":"unavailable","reason":"store down"}"#)])
        let u = try UploadingTracker(client: client)
        // The launch's look at leftovers is done (it must not meet the 503): the uploader waits out its interval.
        #expect(await u.clock.sleeper(within: .seconds(15)))
        for _ in 0..<30 { u.tracker.track("Tap") }
        let result = await u.tracker.flush()
        #expect(result.deliveredEvents == 0)
        #expect(result.pendingEvents == 30)
        guard case .backingOff(_, let error) = result.pendingReason else {
            Issue.record("expected backingOff, got \(String(describing: result.pendingReason))")
            return
        }
        #expect(error == "503 store down")
        #expect(u.tracker.counters.upload?.retries == 1)
        #expect(u.tracker.counters.upload?.state == .backingOff)
        // A new token after a 401 resumes uploads.
        client.append([.respond(401)])
        let refused = await u.tracker.flush()
        #expect(refused.pendingReason == .authorizationRejected(status: 401))
        u.tracker.setToken("n3w")
        try #require(await u.client.requests(atLeast: 3))
        #expect(u.client.requests[2].header("Authorization") == "Bearer n3w")
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    /// The tracker, its log and its uploader read one clock: the event's `time`, the batch's seal time and the
    /// uploader's backoff all follow the manual clock given as `configuration.clock`.
    @Test func oneClockDrivesEventTimeTheSealAndTheBackoff() async throws {
        let client = ScriptedHTTPClient([.respond(503)])
        let u = try UploadingTracker(client: client) { $0.upload.flushInterval = .seconds(3600) }
        #expect(await u.clock.sleeper(within: .seconds(3600)))
        u.clock.advance(by: .seconds(100))
        let trackedAt = u.clock.wallMilliseconds()
        #expect(trackedAt == 1_700_000_100_000)
        u.tracker.track("Tap")

        let failed = await u.tracker.flush()
        guard case .backingOff = failed.pendingReason else {
            Issue.record("expected backingOff, got \(String(describing: failed.pendingReason))")
            return
        }
        let sent = try EventDecoder().decodeBatch(FrameDecoder().decode(client.requests[0].body).payload)
        #expect(sent.map(\.time) == [trackedAt])
        let log = try #require(u.tracker.pipeline.store.durableLog)
        #expect(log.pendingBatches().map(\.sealedAt) == [trackedAt])
        let nextAttempt = try #require(u.tracker.counters.upload?.nextAttemptAt)
        #expect(nextAttempt > trackedAt && nextAttempt <= trackedAt + 1_000, "the first backoff is at most its 1 s base")

        // The retry waits on the same clock: nothing is sent until it passes the backoff.
        #expect(await u.tracker.uploader?.nextPass(timeout: testBound) == true)
        #expect(client.requests.count == 1)
        u.clock.advance(by: .seconds(1))
        try #require(await client.requests(atLeast: 2))
        #expect(await u.tracker.flush().isComplete)
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    @Test func aStalledUploadDoesNotHoldShutdown() async throws {
        let u = try UploadingTracker(client: ScriptedHTTPClient(otherwise: .stall))
        for _ in 0..<10 { u.tracker.track("Tap") }
        let flush = Task { await u.tracker.flush(timeout: .seconds(3600)) }
        #expect(await u.client.requests(atLeast: 1))
        // The stalled request never ends by itself (its timeout is on the manual clock, which stands still), so a
        // shutdown that waited for it would never return: the bound makes that a failure instead of a hang.
        let finishedInTime = await finished { await u.tracker.shutdown(timeout: testBound) }
        #expect(finishedInTime == true, "shutdown() waited for the stalled upload")
        let result = try #require(await finished { await flush.value })
        #expect(result.pendingReason == .stopped)
        // Nothing was lost: the batch waits in the outbox for the next launch.
        let report = try EventLog.inspect(directory: try StoredLogs.only(in: u.directory.url))
        #expect(report.batches.compactMap(\.records).reduce(0, +) + report.liveRecords == 10)
    }

    @Test func theBackgroundUploadRunsInsideTheHostsWindow() async throws {
        let u = try UploadingTracker()
        let center = NotificationCenter()
        let application = FakeApplication()
        let source = NotificationCenterLifecycleSource(center: center, application: application) { .active }
        let calls = CallRecorder()
        source.backgroundTask = BackgroundTaskHook(
            begin: { name, _ in calls.record("begin \(name)"); return 7 },
            end: { id in calls.record("end \(id)") })
        u.tracker.attach(source, recordsCrashes: false)
        for _ in 0..<20 { u.tracker.track("Tap") }
        center.post(name: Notification.Name("UIApplicationWillResignActiveNotification"), object: application)
        center.post(name: Notification.Name("UIApplicationDidEnterBackgroundNotification"), object: application)
        #expect(await calls.count(atLeast: 2))
        #expect(calls.all == ["begin spoor.upload", "end 7"])
        // The window ended after the upload: everything was delivered, each event once.
        let sent = try u.sequencesSent()
        #expect(sent.count == 20)
        #expect(sent == Array((sent.first ?? 0)..<(sent.first ?? 0) + 20))
        #expect(await u.tracker.shutdown(timeout: testBound))
    }

    @Test func configurationChecksTheUploadFields() {
        var configuration = Configuration(storageDirectory: URL(fileURLWithPath: "/tmp/x"))
        configuration.upload.token = "two\nlines"
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.upload.token = "ok"
        configuration.upload.requestTimeout = .zero
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.upload.requestTimeout = .seconds(30)
        #expect(throws: Never.self) { try configuration.validate() }
        #expect(Tracker.batchEndpoint(URL(string: "https://c.example")!).absoluteString == "https://c.example/v1/batch")
        #expect(Tracker.batchEndpoint(URL(string: "https://c.example/ingest")!).absoluteString == "https://c.example/ingest")
    }
}

/// Records calls from any thread; a test awaits a count instead of sleeping.
final class CallRecorder: Sendable {
    private let calls = Locked<[String]>([])
    private let watchers = ConditionWatchers()

    func record(_ call: String) {
        calls.withLock { $0.append(call) }
        watchers.check()
    }

    var all: [String] { calls.withLock { $0 } }

    /// Waits until `count` calls were recorded; false if that did not happen within ``testBound``.
    func count(atLeast count: Int) async -> Bool {
        await watchers.wait(timeout: testBound) { [calls] in calls.withLock { $0.count } >= count }
    }
}
