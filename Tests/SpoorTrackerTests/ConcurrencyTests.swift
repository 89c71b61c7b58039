import Foundation
import SpoorModel
import SpoorLog
import Testing

import SpoorTracker
import SpoorTestSupport
import SpoorSystem

/// A store that keeps only what the concurrency test checks, so 800,000 events fit in little memory.
private final class OrderCheckingStore: EventStore {
    struct Seen {
        var lastIndex: [Int64]
        var count = 0
        var outOfOrder = 0
        var malformed = 0
        var lastSequence: UInt64 = 0
        var sequenceNotIncreasing = 0
        var trackIDs = Set<UInt64>()
    }

    private let seen: Locked<Seen>

    init(tasks: Int) { seen = Locked(Seen(lastIndex: Array(repeating: -1, count: tasks))) }

    func append(_ events: inout [StoredEvent]) {
        seen.withLock { s in
            for stored in events {
                let event = stored.event
                s.count += 1
                if event.sequence <= s.lastSequence { s.sequenceNotIncreasing += 1 }
                s.lastSequence = event.sequence
                s.trackIDs.insert(TrackID.of(event))
                guard case .int(let task) = event.properties["task"], case .int(let index) = event.properties["i"],
                    task >= 0, Int(task) < s.lastIndex.count
                else {
                    s.malformed += 1
                    continue
                }
                // Each task's events must arrive in its own order, each exactly once.
                if index != s.lastIndex[Int(task)] + 1 { s.outOfOrder += 1 }
                s.lastIndex[Int(task)] = index
            }
        }
    }

    func sync() throws {}
    func close() {}
    func lastSequence() -> UInt64? { nil }
    var droppedCount: Int { 0 }
    var corruptCount: Int { 0 }
    var durableLog: EventLog? { nil }
    func onAppend(_ body: (@Sendable (Int) -> Void)?) {}
    func erase(goneProcesses: Bool, following erasures: UInt64) throws -> ErasedLogContents { ErasedLogContents() }
    var result: Seen { seen.withLock { $0 } }
}

@Suite struct ConcurrencyTests {
    #if DEBUG
    // Debug builds are ~20x slower; 8 x 25,000 keeps the whole suite within seconds there.
    static let perTask: Int64 = 25_000
    #else
    static let perTask: Int64 = 25_000
    #endif

    @Test func eightTasksEveryEventExactlyOnceInEachTasksOrder() async throws {
        let tasks = 8
        let store = OrderCheckingStore(tasks: tasks)
        let directory = TemporaryDirectory()
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.tracking.presetOverrides = testPresets
        configuration.storage.maxEvents = 10_000
        let tracker = try Tracker(configuration: configuration, store: store)
        let perTask = Self.perTask
        // Threads of their own: `track` waits while the buffer is full, which must not hold the cooperative pool.
        let accepted = await onThreadsOfTheirOwn(tasks) { task in
            var accepted = 0
            for i in 0..<perTask where tracker.track("Load", properties: ["task": .int(Int64(task)), "i": .int(i)]) {
                accepted += 1
            }
            // One invalid event per task, to check the counters add up.
            if !tracker.track("Load", properties: ["time": 1]) { accepted += 0 }
            return accepted
        }
        #expect(accepted.reduce(0, +) == tasks * Int(perTask))
        #expect(await tracker.shutdown(timeout: testBound))
        let seen = store.result
        let counters = tracker.counters
        #expect(seen.count == tasks * Int(perTask))
        #expect(seen.lastIndex == Array(repeating: perTask - 1, count: tasks))
        #expect(seen.outOfOrder == 0)
        #expect(seen.malformed == 0)
        #expect(seen.sequenceNotIncreasing == 0)
        #expect(seen.trackIDs.count == seen.count)
        #expect(counters.accepted == seen.count + counters.droppedByLog)
        #expect(counters.rejected == [.reservedPropertyKey: tasks])
    }
}
