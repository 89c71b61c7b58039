import Foundation
import Logging
import SpoorModel
import SpoorTestSupport
import SpoorTesting
import SpoorSystem
import Testing

import SpoorTracker

/// Fixed preset properties, so tests do not depend on the machine.
let testPresets: Properties = [
    "$os": "TestOS", "$os_version": "1.0", "$model": "TestModel", "$manufacturer": "TestMaker",
]

/// 2023-11-14T22:13:20Z.
let testEpoch: EpochMilliseconds = 1_700_000_000_000

/// A tracker on a manual clock and an in-memory store, in a fresh directory.
struct Harness {
    let directory: TemporaryDirectory
    let clock: ManualClock
    let store: InMemoryEventStore
    let tracker: Tracker
    let logs: LogCapture

    init(
        directory: TemporaryDirectory = TemporaryDirectory(), clock: ManualClock = ManualClock(wall: testEpoch),
        store: InMemoryEventStore = InMemoryEventStore(), configure: (inout Configuration) -> Void = { _ in }
    ) throws {
        self.directory = directory
        self.clock = clock
        self.store = store
        let logs = LogCapture()
        self.logs = logs
        var configuration = Configuration(storageDirectory: directory.url)
        configuration.clock = clock
        configuration.autoTrack.heartbeatInterval = nil
        configuration.tracking.timeZone = TimeZone(identifier: "UTC")!
        configuration.tracking.presetOverrides = testPresets
        configuration.tracking.appVersion = "9.9"
        configuration.diagnostics.logger = logs.logger
        configure(&configuration)
        tracker = try Tracker(configuration: configuration, store: store)
    }

    /// A second tracker on the same directory and clock: a restart of the app.
    func restarted(store: InMemoryEventStore = InMemoryEventStore(), configure: (inout Configuration) -> Void = { _ in }) throws -> Harness {
        try Harness(directory: directory, clock: clock, store: store, configure: configure)
    }

    /// Everything stored after a flush.
    func flushedEvents() async -> [Event] {
        await tracker.flush()
        return store.events
    }

    func flushedEvents(named name: String) async -> [Event] {
        await flushedEvents().filter { $0.name == name }
    }
}

