import Foundation
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorTesting
import Testing

import SpoorTracker
import SpoorSystem
import SpoorTestSupport

/// The tracker over the real durable log: events go in through the public API and come back out decoded.
@Suite struct EventLogTests {
    struct LogHarness {
        let directory = TemporaryDirectory()
        let clock = ManualClock(wall: testEpoch)

        func configuration(_ configure: (inout Configuration) -> Void = { _ in }) -> Configuration {
            var configuration = Configuration(storageDirectory: directory.url)
            configuration.clock = clock
            configuration.autoTrack.heartbeatInterval = nil
            configuration.tracking.timeZone = TimeZone(identifier: "UTC")!
            configuration.tracking.presetOverrides = testPresets
            configuration.tracking.appVersion = "9.9"
            configure(&configuration)
            return configuration
        }

        func tracker(_ configure: (inout Configuration) -> Void = { _ in }) throws -> Tracker {
            try Tracker(configuration: configuration(configure))
        }

        /// Opens the log the tracker wrote (after it shut down) and decodes every record.
        func readBack(maxRecords: Int = 10_000, maxBytes: Int = 32 << 20) throws -> (events: [Event], counters: LogCounters) {
            let log = try EventLog(directory: Tracker.logDirectory(in: directory.url), configuration: .init(maxBytes: maxBytes, maxRecords: maxRecords))
            defer { log.close() }
            let decoder = EventDecoder()
            var events: [Event] = []
            try log.forEachRecord { payload in events += try decoder.decodeBatch(payload) }
            return (events, log.counters)
        }
    }

    /// The store's after-append callback (the uploader's bulk trigger) is called the same way after the 200th
    /// write group as after the first: reading it back must not wrap it in another layer each time.
    @Test func afterAppendCallbackCostsTheSameOnEveryGroup() async throws {
        let harness = LogHarness()
        let tracker = try harness.tracker()
        let store = try #require(tracker.pipeline.store as? EventLogStore)
        let depths = Locked<[Int]>([])
        store.onAppend { _ in depths.withLock { $0.append(Thread.callStackReturnAddresses.count) } }
        for _ in 0..<200 {
            tracker.track("E")
            await tracker.flush()
        }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 200)
        #expect(seen.first == seen.last, "the stack under append grew from \(seen.first ?? 0) to \(seen.last ?? 0) frames")
        #expect(await tracker.shutdown(timeout: testBound))
    }

    @Test func codeEventsIdentityAndSuperPropertiesGoIntoTheLogAndBackOut() async throws {
        let harness = LogHarness()
        let tracker = try harness.tracker { $0.tracking.appVersion = "2.0" }
        let anonymous = tracker.anonymousID
        tracker.registerSuperProperties(["plan": "pro"])
        tracker.track("ViewProduct", properties: ["product": "tea", "price": 3.5])
        tracker.login("user-1")
        harness.clock.advance(by: .seconds(1))
        tracker.track("BuyProduct", properties: ["product": "tea", "quantity": 2, "tags": ["green"]])
        tracker.profileSet(["name": "Ann"])
        #expect(await tracker.shutdown(timeout: testBound))

        let (events, _) = try harness.readBack()
        #expect(events.map(\.name) == ["ViewProduct", "$SignUp", "BuyProduct", ""])
        #expect(events.map(\.type) == [.track, .trackSignup, .track, .profileSet])
        #expect(events.map(\.sequence) == [1, 2, 3, 4])
        #expect(events[0].distinctID == anonymous)
        #expect(events[0].properties["plan"] == "pro")
        #expect(events[0].properties["price"] == 3.5)
        #expect(events[0].properties["$os"] == "TestOS")
        #expect(events[0].lib.appVersion == "2.0")
        #expect(events[1].originalID == anonymous)
        #expect(events[2].distinctID == "user-1")
        #expect(events[2].loginID == "user-1")
        #expect(events[2].anonymousID == anonymous)
        #expect(events[2].time == testEpoch + 1000)
        #expect(events[2].properties["tags"] == ["green"])
        #expect(events[3].properties == ["name": "Ann"])
    }

    /// The log store splices the base properties' encoding in; what comes back must equal the merged record.
    @Test func splicedRecordsDecodeToTheMergedEvent() async throws {
        func run(_ tracker: Tracker, _ clock: ManualClock) {
            tracker.identify("anonymous-1")
            tracker.track("NoSupers", properties: ["a": 1])
            tracker.registerSuperProperties(["plan": "pro", "level": 3, "$os": "SuperOS"])
            tracker.track("Plain", properties: ["product": "tea", "price": 3.5, "tags": ["x"]])
            tracker.track("Collides", properties: ["plan": "free"])
            tracker.track("Dollar", properties: ["$screen_name": "Home", "$device_id": "mine"])
            tracker.track("Empty")
            tracker.registerDynamicSuperProperties { ["mood": "calm", "level": 4] }
            tracker.track("Dynamic", properties: ["mood": "happy"])
            tracker.registerDynamicSuperProperties(nil)
            tracker.trackAutomatic(AppStart(resumeFromBackground: false, isFirstTime: true))
            tracker.login("user-1")
            tracker.profileSet(["name": "Ann"])
            clock.advance(by: .seconds(2 * 86_400))
            tracker.track("NotFirstDay", properties: ["b": false])
            tracker.registerSuperProperties(["plan": "team"])
            tracker.track("NewSnapshot")
        }
        func normalized(_ events: [Event]) -> [Event] {
            events.map { event in
                var event = event
                event.trackID = 0
                event.properties["$device_id"] = nil
                return event
            }
        }
        let logHarness = LogHarness()
        let logged = try logHarness.tracker { $0.autoTrack.events = .all }
        run(logged, logHarness.clock)
        #expect(await logged.shutdown(timeout: testBound))
        let memory = try Harness { $0.autoTrack.events = .all }
        run(memory.tracker, memory.clock)
        let expected = await memory.flushedEvents()
        let decoded = try logHarness.readBack().events
        #expect(decoded.count == 11)
        #expect(normalized(decoded) == normalized(expected))
        #expect(decoded.allSatisfy { $0.type != .track || $0.properties["$device_id"] != nil })
    }

    @Test func theLogDropsTheOldestWhenFullAndTheCountersAddUp() async throws {
        let harness = LogHarness()
        let tracker = try harness.tracker {
            $0.storage.maxEvents = 100
            $0.upload.flushBulkSize = 10
        }
        for i in 0..<150 { tracker.track("E", properties: ["i": .int(Int64(i))]) }
        await tracker.flush()
        let counters = tracker.counters
        #expect(counters.accepted == 150)
        #expect(counters.droppedByLog == 50)
        #expect(await tracker.shutdown(timeout: testBound))
        let (events, _) = try harness.readBack()
        #expect(events.count == 100)
        #expect(events.first?.properties["i"] == 50)  // oldest first out
        #expect(events.last?.properties["i"] == 149)
    }

    @Test func aSequenceNumberIsNeverReusedWhenTheStateFileLagsTheLog() async throws {
        let harness = LogHarness()
        let state = harness.directory.url.appendingPathComponent("state.json")
        #expect(await (try harness.tracker()).shutdown(timeout: testBound))
        let before = try Data(contentsOf: state)  // sequence 1 is next
        let first = try harness.tracker()
        for _ in 0..<5 { first.track("E") }
        #expect(await first.shutdown(timeout: testBound))
        // A crash after the log got the events but before the state file did.
        try before.write(to: state)
        let second = try harness.tracker()
        second.track("After")
        #expect(await second.shutdown(timeout: testBound))
        let (events, _) = try harness.readBack()
        #expect(events.map(\.sequence) == [1, 2, 3, 4, 5, 6])
    }

    @Test func corruptRecordsAreCounted() async throws {
        let harness = LogHarness()
        let tracker = try harness.tracker()
        for _ in 0..<20 { tracker.track("E", properties: ["padding": .string(String(repeating: "x", count: 100))]) }
        #expect(await tracker.shutdown(timeout: testBound))
        // Flip a byte in the middle of the segment's records.
        let segment = try #require(
            try FileManager.default.contentsOfDirectory(atPath: Tracker.logDirectory(in: harness.directory.url).path).first { $0.hasPrefix("seg-") })
        let url = Tracker.logDirectory(in: harness.directory.url).appendingPathComponent(segment)
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: url)
        let reopened = try harness.tracker()
        #expect(reopened.counters.corrupt >= 1)
        #expect(await reopened.shutdown(timeout: testBound))
        #expect(try harness.readBack().events.count < 20)
    }

    @Test func aDirectoryInUseIsAConfigurationError() async throws {
        let harness = LogHarness()
        let tracker = try harness.tracker()
        #expect(throws: ConfigurationError.self) { try harness.tracker() }
        #expect(await tracker.shutdown(timeout: testBound))
    }

    @Test func concurrentTasksThroughTheLogEachEventOnceInTaskOrder() async throws {
        #if DEBUG
        // Debug builds encode ~10x slower; the release run (swift test -c release) does the full 8 x 100,000.
        let perTask: Int64 = 2_000
        #else
        let perTask: Int64 = 100_000
        #endif
        let tasks = 8
        let harness = LogHarness()
        let tracker = try harness.tracker {
            $0.storage.maxEvents = 1_000_000
            $0.storage.maxBytes = 1 << 30
        }
        // Threads of their own: `track` waits while the buffer is full, which must not hold the cooperative pool.
        _ = await onThreadsOfTheirOwn(tasks) { task in
            for i in 0..<perTask { tracker.track("Load", properties: ["task": .int(Int64(task)), "i": .int(i)]) }
        }
        #expect(await tracker.shutdown(timeout: testBound))
        let (events, _) = try harness.readBack(maxRecords: 1_000_000, maxBytes: 1 << 30)
        #expect(events.count == tasks * Int(perTask))
        var next = Array(repeating: Int64(0), count: tasks)
        var outOfOrder = 0
        for event in events {
            guard case .int(let task) = event.properties["task"], case .int(let i) = event.properties["i"] else {
                outOfOrder += 1
                continue
            }
            if next[Int(task)] != i { outOfOrder += 1 }
            next[Int(task)] = i + 1
        }
        #expect(outOfOrder == 0)
        #expect(next == Array(repeating: perTask, count: tasks))
        #expect(tracker.counters.accepted == events.count + tracker.counters.droppedByLog)
        #expect(Set(events.map(\.sequence)).count == events.count)
    }
}
