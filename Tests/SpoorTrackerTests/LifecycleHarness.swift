import Foundation
import SpoorCore
@testable import SpoorTracker

/// One auto event as the tests see it.
struct RecordedEvent: Sendable, Hashable, CustomStringConvertible {
    var name: String
    var properties: Properties
    var time: EpochMilliseconds

    var duration: Double? {
        if case .double(let value)? = properties["event_duration"] { return value }
        return nil
    }

    var description: String { "\(name)@\(time) \(properties)" }
}

/// Records what auto-tracking asks of the tracker.
final class RecordingSink: AutoTrackSink, @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [RecordedEvent] = []
    private var _calls: [String] = []
    let clock: TestClock

    init(clock: TestClock) { self.clock = clock }

    var events: [RecordedEvent] { lock.withLock { _events } }
    var calls: [String] { lock.withLock { _calls } }

    func trackAutomatic(_ name: String, properties: Properties, at time: EpochMilliseconds?) -> Bool {
        let wall = time ?? clock.now().wall
        lock.withLock {
            _events.append(RecordedEvent(name: name, properties: properties, time: wall))
            _calls.append(name)
        }
        return true
    }
    func pauseAllTimers(at now: UInt64?) { lock.withLock { _calls.append("pause") } }
    func resumeAllTimers(at now: UInt64?) { lock.withLock { _calls.append("resume") } }
    func requestFlush() { lock.withLock { _calls.append("flush") } }
    func flushAndWait(timeout: Duration) -> Bool {
        lock.withLock { _calls.append("sync") }
        return true
    }
}

/// A manual clock: wall time starts at 2026-01-01T00:00:00Z, monotonic at an arbitrary base.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var instant: LifecycleInstant

    init(wall: EpochMilliseconds = 1_767_225_600_000, monotonic: UInt64 = 5_000_000_000) {
        instant = LifecycleInstant(wall: wall, monotonic: monotonic)
    }

    func now() -> LifecycleInstant { lock.withLock { instant } }

    func advance(milliseconds: Int64) {
        lock.withLock {
            instant.wall += milliseconds
            instant.monotonic += UInt64(milliseconds) * 1_000_000
        }
    }
}

/// A fresh temporary storage directory per test.
func makeTemporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("spoor-lifecycle-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// One process's auto-tracking over a storage directory, driven by hand.
struct LifecycleHarness {
    let clock: TestClock
    let sink: RecordingSink
    let controller: AutoTrackController
    let directory: URL

    init(
        directory: URL = makeTemporaryDirectory(), clock: TestClock = TestClock(), isFirstLaunch: Bool = true,
        enabled: Set<AutoTrackEventKind> = Set(AutoTrackEventKind.allCases)
    ) {
        self.directory = directory
        self.clock = clock
        sink = RecordingSink(clock: clock)
        let options = LifecycleOptions(storageDirectory: directory, enabled: enabled, heartbeatInterval: nil)
        controller = AutoTrackController(options: options, now: { [clock] in clock.now() })
        controller.connect(sink, isFirstLaunch: isFirstLaunch)
    }

    func send(_ signals: LifecycleSignal...) {
        for signal in signals { controller.handle(signal) }
    }

    func advance(_ milliseconds: Int64) { clock.advance(milliseconds: milliseconds) }

    func appear(_ id: String, url: String? = nil, title: String? = nil) {
        controller.pageAppear(id: id, info: PageInfo(screenName: id, title: title ?? "Title \(id)", url: url ?? "app://\(id)"))
    }

    func disappear(_ id: String) { controller.pageDisappear(id: id) }

    var events: [RecordedEvent] { sink.events }
    var names: [String] { sink.events.map(\.name) }

    /// Cold start as L1.
    func coldStart() { send(.didFinishLaunching(.inactive), .didBecomeActive) }
    func goHome() { send(.willResignActive, .didEnterBackground) }
    func hotStart() { send(.willEnterForeground, .didBecomeActive) }
}
