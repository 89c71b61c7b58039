import Foundation
import SpoorCollectorTestSupport
import SpoorFaultProxy
import SpoorLoopback
import SpoorModel
import SpoorSystem
import SpoorTesting
import SpoorTracker
import SpoorLog
import SpoorUpload
import Testing

/// A tracker uploading through a ``FaultProxy`` to a real collector, on a manual upload clock.
final class UploadRig {
    let collector: CollectorProcess
    let proxy: FaultProxy
    let clock = ManualClock()
    let storage: URL
    let tracker: Tracker
    /// The uploader's request timeout: a length no other timer of the uploader uses, so a test can wait for it. The
    /// HTTP client applies it too, on real time: ten minutes (less a second), so that a request the proxy holds stays held
    /// until the test moves the manual clock, however long the test takes meanwhile.
    static let requestTimeout: Duration = .seconds(599)
    private var next = 0

    /// Starts the collector, the proxy and the tracker, and waits until the uploader's first look at the (empty)
    /// outbox is over, so the first upload a test asks for is the first request the proxy sees.
    /// `systemClock` leaves the uploader on real time (with `requestTimeout`), for the one test about real stalls.
    init(script: FaultScript, flushBulkSize: Int = 100, systemClock: Bool = false,
         requestTimeout: Duration = UploadRig.requestTimeout) async throws {
        collector = try await CollectorProcess()
        proxy = try FaultProxy(upstreamPort: collector.port, script: script)
        storage = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-fault-\(UUID().uuidString)")
        var configuration = Configuration(storageDirectory: storage)
        configuration.upload.serverURL = proxy.batchURL
        if systemClock {
            // On real time nothing may retry while the test looks: a full-jitter draw near 0 would let the retry
            // after a timeout fire before `flush()` returns. Every draw here is the ceiling: the retry waits 1 h.
            configuration.upload.backoff = Backoff(base: .seconds(3600), cap: .seconds(3600))
            configuration.uploadRandom = AlwaysTheCeiling()
            // Nor may the flush interval (real time too) start an attempt of its own while a loaded machine takes
            // more than its 15 s over the set-up and the tracking: that attempt would take part of the events,
            // and the flush the rest in a second request.
            configuration.upload.flushInterval = .seconds(3600)
        } else {
            configuration.clock = clock
            configuration.uploadRandom = SplitMix64(seed: 9)
        }
        configuration.upload.requestTimeout = requestTimeout
        configuration.upload.flushBulkSize = flushBulkSize
        configuration.storage.durability = .none
        // The faults are the point: their warnings would only bury the test output.
        configuration.diagnostics.logger.logLevel = .critical
        tracker = try Tracker(configuration: configuration)
        let empty = await tracker.flush()
        #expect(empty.isComplete && proxy.requests.isEmpty, "\(empty)")
    }

    deinit {
        proxy.stop()
    }

    /// Shuts the tracker down and removes its storage.
    func close() async {
        _ = await tracker.shutdown()
        try? FileManager.default.removeItem(at: storage)
    }

    /// Tracks `count` events (numbered on from the last); `properties` adds to each. The calls run on a thread of
    /// their own, and a test fails unless they all return within minutes: `track` must never wait for the network,
    /// and while a request hangs (a stall the manual clock has not ended) one that did would not return at all.
    func track(_ count: Int, properties: Properties = [:]) async {
        let tracker = self.tracker
        let first = next
        next += count
        let accepted = await onThreadOfItsOwn(within: waitBound) {
            (first..<(first + count)).map { n -> Bool in
                var merged = properties
                merged["n"] = .int(Int64(n))
                return tracker.track("FaultProbe", properties: merged)
            }
        }
        guard let accepted else {
            Issue.record("track did not return within \(waitBound): it waited for something")
            return
        }
        #expect(accepted.allSatisfy { $0 }, "\(accepted.filter { !$0 }.count) events refused")
    }

    /// The store, checked: each (anonymous id, sequence) at most once, all of this tracker's id; returns how many.
    func storedExactlyOnce() throws -> Int {
        let pairs = try StoreReading(path: collector.databasePath).pairCounts()
        let repeated = pairs.filter { $0.value != 1 }
        #expect(repeated.isEmpty, "stored more than once: \(repeated.keys.sorted { $0.sequence < $1.sequence })")
        #expect(Set(pairs.keys.map(\.anonymousID)) == (pairs.isEmpty ? [] : [tracker.anonymousID]))
        return pairs.count
    }

    /// What the `rejected` area holds.
    var rejected: RejectedArea.Summary { RejectedArea.summary(logDirectory: Tracker.logDirectory(in: storage)) }

    /// The upload counters.
    var upload: UploadCounters { tracker.counters.upload ?? UploadCounters() }
}

/// A generator whose every draw is the largest word: a full-jitter backoff then waits its whole ceiling.
private struct AlwaysTheCeiling: RandomNumberGenerator, Sendable {
    mutating func next() -> UInt64 { .max }
}
