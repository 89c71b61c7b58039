import Foundation
import SpoorModel
import SpoorLog
import Testing

import SpoorTracker
import SpoorTestSupport
import SpoorSystem

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
        #expect(store.appended.count == 1)
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
        #expect(store.appended.count == 0)
        store.openGate()
        let done: Void? = await finished { await allReturned.value }
        #expect(done != nil)
        #expect(returned.withLock { $0 } == total)
        #expect(await tracker.shutdown(timeout: testBound))
        #expect(store.appended.count == total)
        #expect(tracker.counters.accepted == total)
    }
}
