import Foundation
import Logging
import ServiceLifecycle
import SpoorCollectorTestSupport
import SpoorFaultProxy
import SpoorLoopback
import SpoorServiceLifecycle
import SpoorSystem
import SpoorTracker
import Testing

/// TrackerService in a real ServiceGroup, uploading to a real collector process.
@Suite(.serialized, .timeLimit(.minutes(10))) struct TrackerServiceTests {
    /// A tracker of `storage` uploading to `url`.
    static func tracker(_ storage: StorageDirectory, uploadingTo url: URL) throws -> Tracker {
        var configuration = SpoorTracker.Configuration(storageDirectory: storage.url)
        configuration.upload.serverURL = url
        configuration.storage.durability = .none
        return try Tracker(configuration: configuration)
    }

    /// A group of `services` that logs nothing and ends on the test's signal rather than a process's.
    static func group(_ services: [any Service]) -> ServiceGroup {
        ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: .init(label: "test") { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func aGracefulShutdownUploadsEverythingAndClosesTheTracker() async throws {
        let collector = try await CollectorProcess()
        let storage = StorageDirectory()
        let tracker = try Self.tracker(storage, uploadingTo: collector.batchURL)
        let report = Promise<TrackerServiceShutdown>()
        let service = TrackerService(tracker: tracker, uploadTimeout: waitBound) { report.fulfil($0) }
        let group = Self.group([service])
        let running = Task { try await group.run() }
        for n in 0..<500 { #expect(tracker.track("Served", properties: ["n": .int(Int64(n))])) }

        await group.triggerGracefulShutdown()
        try await running.value
        let shutdown = await report.value
        #expect(shutdown.isComplete, "\(shutdown)")
        #expect(!shutdown.cancelled)
        // The service ended the tracker: nothing more is recorded.
        #expect(!tracker.track("Late"))
        let stored = try StoredEvents(databasePath: collector.databasePath)
        #expect(stored.rows.count == 500)
        #expect(stored.isExactlyOnce)
    }

    @Test func aCancelledServiceEndsTheTrackerAllTheSame() async throws {
        let collector = try await CollectorProcess()
        let storage = StorageDirectory()
        let tracker = try Self.tracker(storage, uploadingTo: collector.batchURL)
        let report = Promise<TrackerServiceShutdown>()
        let service = TrackerService(tracker: tracker, uploadTimeout: waitBound) { report.fulfil($0) }
        for n in 0..<100 { tracker.track("Served", properties: ["n": .int(Int64(n))]) }

        let running = Task { try await service.run() }
        running.cancel()
        try await running.value
        let shutdown = await report.value
        #expect(shutdown.cancelled)
        #expect(shutdown.isComplete, "\(shutdown)")
        #expect(!tracker.track("Late"))
        #expect(try StoredEvents(databasePath: collector.databasePath).rows.count == 100)
    }

    @Test func theShutdownWaitsNoLongerThanItsBoundAndLeavesTheRestForTheNextStart() async throws {
        // Every request hangs for ten minutes: without its bound the service would outlive the test's time limit.
        let proxy = try FaultProxy(upstreamPort: nil, script: FaultScript(then: .stall(.seconds(600))))
        defer { proxy.stop() }
        let storage = StorageDirectory()
        let tracker = try Self.tracker(storage, uploadingTo: proxy.batchURL)
        let report = Promise<TrackerServiceShutdown>()
        let service = TrackerService(tracker: tracker, uploadTimeout: .seconds(1)) { report.fulfil($0) }
        let group = Self.group([service])
        let running = Task { try await group.run() }
        for n in 0..<100 { tracker.track("Served", properties: ["n": .int(Int64(n))]) }

        await group.triggerGracefulShutdown()
        try await running.value
        let shutdown = await report.value
        #expect(!shutdown.isComplete)
        #expect(shutdown.closed, "the log is closed even though the upload did not finish")
        #expect((shutdown.flush?.deliveredEvents ?? 0) == 0, "\(shutdown)")

        // Nothing is lost: the events waited in the storage directory, and the next start delivers them.
        let collector = try await CollectorProcess()
        let next = try Self.tracker(storage, uploadingTo: collector.batchURL)
        let delivered = await next.flush(timeout: waitBound)
        #expect(delivered.isComplete, "\(delivered)")
        let stored = try StoredEvents(databasePath: collector.databasePath)
        #expect(stored.rows.count == 100)
        #expect(stored.isExactlyOnce)
        #expect(await next.shutdown(timeout: waitBound))
    }
}
