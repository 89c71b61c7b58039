import Foundation
import Metrics
import MetricsTestKit
import SpoorModel
import SpoorLog
import SpoorSystem
import SpoorTesting
import Testing

import SpoorTracker
import SpoorTestSupport

@Suite struct ServerConfigurationTests {
    @Test func theServerPresetDiffersFromAnAppWhereItSays() {
        let directory = URL(fileURLWithPath: "/var/lib/shop/spoor")
        let server = Configuration.server(storageDirectory: directory, serverURL: URL(string: "https://collector.example"))
        let app = Configuration(storageDirectory: directory)
        #expect(server.upload.serverURL == URL(string: "https://collector.example"))
        #expect(server.tracking.devicePresets == false && app.tracking.devicePresets)
        #expect(server.storage.whenBufferIsFull == .dropOldest && app.storage.whenBufferIsFull == .block)
        #expect(server.autoTrack.events.isEmpty && server.autoTrack.capture.isEmpty)
        #expect(server.autoTrack.heartbeatInterval == nil)
        #expect(server.tracking.enableSession == false)
        #expect(server.storage.maxBufferedEvents == app.storage.maxBufferedEvents)
        #expect(throws: Never.self) { try server.validate() }
    }

    @Test func serverEventsCarryNoDevicePresets() async throws {
        let directory = TemporaryDirectory()
        var configuration = Configuration.server(storageDirectory: directory.url, serverURL: nil)
        configuration.clock = ManualClock(wall: testEpoch)
        configuration.tracking.appVersion = "4.2"
        configuration.tracking.presetOverrides = ["$screen_width": 0, "region": "eu"]
        let store = InMemoryEventStore()
        let tracker = try Tracker(configuration: configuration, store: store)
        #expect(tracker.track("Purchase", distinctID: "user-42"))
        await tracker.flush()
        let event = try #require(store.events.first)
        for key in ["$os", "$os_version", "$model", "$manufacturer", "$timezone_offset", "$screen_height"] {
            #expect(event.properties[key] == nil, "\(key) is on a server's event")
        }
        // What names the install and the software stays, and what the host set itself is carried.
        #expect(event.properties["$device_id"] != nil)
        #expect(event.properties["$lib"] != nil)
        #expect(event.properties["$app_version"] == "4.2")
        #expect(event.properties["$screen_width"] == 0)
        #expect(event.properties["region"] == "eu")
        #expect(event.distinctID == "user-42")
        #expect(event.sessionID == nil)
        #expect(store.events.count == 1)  // nothing tracked on its own
        #expect(await tracker.shutdown(timeout: testBound))
    }

    /// The writer is stuck; 20,000 calls from one thread all return (none waits); what is kept is what the writer
    /// took before it got stuck and the newest `maxBufferedEvents`; the rest are counted, exactly, as dropped, and
    /// no event is stored in part.
    @Test func atTheBoundTheOldestIsDroppedAndTheCallerNeverWaits() async throws {
        let store = GatedStore()
        let metrics = SharedTestMetrics.backend
        let dimension = ("test", UUID().uuidString)
        var configuration = Configuration.server(storageDirectory: TemporaryDirectory().url, serverURL: nil)
        configuration.clock = ManualClock(wall: testEpoch)
        configuration.storage.maxBufferedEvents = 4096
        configuration.diagnostics.metricsDimensions = [dimension]
        let tracker = try Tracker(configuration: configuration, store: store)
        tracker.track("First", distinctID: "user-0", properties: ["i": 0])
        let stuck: Void? = await finished { await store.writerStuck.value }
        try #require(stuck != nil, "the writer never reached the store")

        let total = 20_000
        let returned = await finished {
            await onThreadOfItsOwn {
                var recorded = 0
                for i in 1..<total {
                    if tracker.track("Burst", distinctID: "user-\(i % 50)", properties: ["i": .int(Int64(i))]) { recorded += 1 }
                }
                return recorded
            }
        }
        // Every call returned while the writer was stuck, and every one was accepted.
        #expect(returned == total - 1)
        #expect(tracker.pipeline.firstBlockedProducer.current == nil, "a caller waited at the bound")
        #expect(store.appended.isEmpty)
        let dropped = tracker.counters.droppedWhenBufferFull
        store.openGate()
        #expect(await tracker.shutdown(timeout: testBound))

        let kept = store.appended
        let counters = tracker.counters
        #expect(counters.accepted == total)
        #expect(counters.droppedWhenBufferFull == dropped)
        #expect(kept.count + dropped == total)
        // The writer had taken a prefix before it got stuck; after that only the newest 4,096 remain.
        let indexes = kept.map { event -> Int64 in
            if case .int(let i) = event.properties["i"] { return i } else { return -1 }
        }
        let taken = kept.count - 4096
        #expect(taken >= 1)
        #expect(indexes == Array(0..<Int64(taken)) + Array(Int64(total - 4096)..<Int64(total)))
        #expect(dropped == total - 4096 - taken)
        // Whole events only, each with its own id, and sequence numbers with the dropped ones as a gap.
        #expect(kept.dropFirst().allSatisfy { $0.name == "Burst" && $0.distinctID == "user-\(indexesOf($0) % 50)" })
        #expect(kept.map(\.sequence) == kept.map(\.sequence).sorted())
        #expect(kept.last.map(\.sequence) == UInt64(total))
        let exported = metrics.counters(label: "spoor_events_dropped_total", dimensions: [dimension, ("reason", "buffer")])
            .map(\.totalValue).reduce(0, +)
        #expect(exported == Int64(dropped))
    }

    /// At the bound, an event whose dynamic super properties fail validation is rejected, and costs nothing: the
    /// oldest waiting event is dropped only for an event that goes in.
    @Test func anEventRejectedForItsDynamicPropertiesDropsNothingAtTheBound() async throws {
        let store = GatedStore()
        var configuration = Configuration.server(storageDirectory: TemporaryDirectory().url, serverURL: nil)
        configuration.clock = ManualClock(wall: testEpoch)
        configuration.storage.maxBufferedEvents = 4096  // the least the tracker keeps
        let tracker = try Tracker(configuration: configuration, store: store)
        tracker.track("First", distinctID: "user-0")
        let stuck: Void? = await finished { await store.writerStuck.value }
        try #require(stuck != nil, "the writer never reached the store")
        var accepted = 0
        for i in 1...4096 where tracker.track("Waiting", distinctID: "user-\(i % 50)", properties: ["i": .int(Int64(i))]) {
            accepted += 1
        }
        #expect(accepted == 4096)
        #expect(tracker.counters.droppedWhenBufferFull == 0)

        tracker.registerDynamicSuperProperties { ["score": .double(.nan)] }
        #expect(!tracker.track("Rejected", distinctID: "user-9"))
        #expect(tracker.counters.rejected[.nonFiniteNumber] == 1)
        #expect(tracker.counters.droppedWhenBufferFull == 0, "a rejected event cost a waiting one")

        tracker.registerDynamicSuperProperties { ["score": 1] }
        #expect(tracker.track("Accepted", distinctID: "user-10"))
        #expect(tracker.counters.droppedWhenBufferFull == 1)
        store.openGate()
        #expect(await tracker.shutdown(timeout: testBound))
        #expect(store.appended.map(\.name) == ["First"] + Array(repeating: "Waiting", count: 4095) + ["Accepted"])
        #expect(store.appended.dropFirst().first?.properties["i"] == 2)
    }

    @Test func anAppStillWaitsAtTheBound() {
        var queue = WriterQueue(nextSequence: 1, memoryLimit: 2, wakeThreshold: 512, capacity: 4)
        var event = PipelineStateTests.event("A")
        #expect(queue.admit(optedOut: false) == .open)
        _ = queue.append(&event)
        event = PipelineStateTests.event("B")
        #expect(queue.admit(optedOut: false) == .open)
        _ = queue.append(&event)
        #expect(queue.admit(optedOut: false) == .full(wakeWriter: false))
        #expect(queue.droppedAtBound == 0)
        #expect(queue.waiting.map(\.name) == ["A", "B"])
    }

    @Test func theDropOldestQueueKeepsTheNewestAndItsMemoryBounded() {
        var queue = WriterQueue(nextSequence: 1, memoryLimit: 4, wakeThreshold: 512, capacity: 4, dropsOldestWhenFull: true)
        for i in 0..<11 {
            #expect(queue.admit(optedOut: false) == .open)
            var event = PipelineStateTests.event("E\(i)")
            _ = queue.append(&event)
            #expect(queue.waiting.count == min(i + 1, 4))
        }
        #expect(queue.waiting.map(\.name) == ["E7", "E8", "E9", "E10"])
        #expect(queue.droppedAtBound == 7)
        #expect(queue.accepted == 11)
        var back: [PendingEvent] = []
        guard case .write = queue.nextStep(lingered: true, swappingWith: &back) else {
            Issue.record("the writer was given nothing to write")
            return
        }
        #expect(back.map(\.name) == ["E7", "E8", "E9", "E10"])
    }
}

private func indexesOf(_ event: Event) -> Int {
    if case .int(let i) = event.properties["i"] { return Int(i) }
    return -1
}
