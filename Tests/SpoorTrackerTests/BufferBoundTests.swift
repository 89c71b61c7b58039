import Foundation
import SpoorModel
import SpoorLog
import Testing

import SpoorTracker
import SpoorTestSupport
import SpoorSystem

/// A store whose `append` waits until the test opens its gate: a writer stuck on a slow disk.
private final class GatedStore: EventStore, @unchecked Sendable {
    // @unchecked: `count` is under `lock`; the gate is a condition variable.
    private let gate = NSCondition()
    private var open = false
    private let lock = NSLock()
    private var count = 0

    func append(_ events: inout [StoredEvent]) {
        gate.lock()
        while !open { gate.wait() }
        gate.unlock()
        lock.withLock { count += events.count }
    }

    func openGate() {
        gate.lock()
        open = true
        gate.broadcast()
        gate.unlock()
    }

    var appended: Int { lock.withLock { count } }
    /// Fulfilled when the writer closes the store.
    let closed = Promise<Void>()
    func sync() throws {}
    func close() { closed.fulfil(()) }
    func lastSequence() -> UInt64? { nil }
    var droppedCount: Int { 0 }
    var corruptCount: Int { 0 }
    var durableLog: EventLog? { nil }
    func onAppend(_ body: (@Sendable (Int) -> Void)?) {}
    func erase() throws -> ErasedLogContents { ErasedLogContents() }
}

@Suite struct BufferBoundTests {
    @Test("Releasing a tracker never waits for its writer: the writer stores what was accepted and closes on its own")
    func releaseDoesNotWaitForAStuckWriter() async throws {
        let store = GatedStore()
        var configuration = Configuration(storageDirectory: TemporaryDirectory().url)
        configuration.tracking.presetOverrides = testPresets
        do {
            let tracker = try Tracker(configuration: configuration, store: store)
            tracker.track("BeforeRelease")
        }
        // The release returned while the writer is stuck in `append`, so the store cannot have been closed yet.
        #expect(store.closed.current == nil)
        store.openGate()
        let closed: Void? = await finished { await store.closed.value }
        #expect(closed != nil)
        #expect(store.appended == 1)
    }

    @Test("Memory is bounded by maxBufferedEvents, not by the log's cap: track waits for a stuck writer")
    func trackWaitsAtTheBufferBound() async throws {
        let store = GatedStore()
        var configuration = Configuration(storageDirectory: TemporaryDirectory().url)
        configuration.tracking.presetOverrides = testPresets
        configuration.storage.maxEvents = 1_000_000  // a big log for a long time offline
        configuration.storage.maxBufferedEvents = 4096
        let tracker = try Tracker(configuration: configuration, store: store)
        let returned = Locked(0)
        let total = 20_000
        let allReturned = Promise<Void>()
        Thread.detachNewThread {
            for i in 0..<total {
                tracker.track("Burst", properties: ["i": .int(Int64(i))])
                returned.withLock { $0 += 1 }
            }
            allReturned.fulfil(())
        }
        // The caller stops once the buffer is full, while the writer is stuck in `append`.
        let blocked: Void? = await finished { await tracker.pipeline.firstBlockedProducer.value }
        try #require(blocked != nil, "track never waited at the bound")
        let held = returned.withLock { $0 }
        // The buffer, plus at most one buffer's worth the writer took before it got stuck.
        #expect(held >= 4096 && held <= 2 * 4096, "\(held) calls returned")
        #expect(store.appended == 0)
        store.openGate()
        let done: Void? = await finished { await allReturned.value }
        #expect(done != nil)
        #expect(returned.withLock { $0 } == total)
        #expect(await tracker.shutdown(timeout: testBound))
        #expect(store.appended == total)
        #expect(tracker.counters.accepted == total)
    }
}
