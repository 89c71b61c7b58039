import Foundation
import Logging
import SpoorCore
import Testing

@testable import SpoorTracker

/// A fresh temporary directory per test, removed when the harness goes away.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-tracker-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Collects log messages so tests can check what was reported.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = Locked<[Entry]>([])

    var all: [Entry] { entries.withLock { $0 } }

    func record(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var flat: [String: String] = [:]
            for (key, value) in event.metadata ?? [:] { flat[key] = "\(value)" }
            capture.record(Entry(level: event.level, message: "\(event.message)", metadata: flat))
        }
    }
}

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
        configuration.wallClock = clock
        configuration.monotonicClock = clock
        configuration.timeZone = TimeZone(identifier: "UTC")!
        configuration.presetOverrides = testPresets
        configuration.appVersion = "9.9"
        configuration.logger = logs.logger
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
