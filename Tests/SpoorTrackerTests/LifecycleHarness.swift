import Foundation
import Testing
import SpoorModel
import SpoorLog
import SpoorTesting
import SpoorTracker
import SpoorSystem
import SpoorTestSupport

/// One auto event as the lifecycle tests see it: name, time and the lifecycle's own properties (preset
/// and super properties the tracker merges in are left out).
struct RecordedEvent: Sendable, Hashable, CustomStringConvertible {
    static let lifecycleKeys: Set<String> = [
        "$resume_from_background", "$is_first_time", "event_duration", "$app_end_reason", "$screen_name",
        "$title", "$url", "$referrer", "$referrer_title", "$element_type", "$element_content", "$element_id",
        "$element_position", "$element_path", "app_crashed_reason",
    ]

    var name: String
    var properties: Properties
    var time: EpochMilliseconds

    init(name: String, properties: Properties, time: EpochMilliseconds) {
        self.name = name
        self.properties = properties.filter { Self.lifecycleKeys.contains($0.key) }
        self.time = time
    }

    var duration: Double? {
        if case .double(let value)? = properties["event_duration"] { return value }
        return nil
    }

    var description: String { "\(name)@\(time) \(properties)" }
}

/// Records what auto-tracking asks of the tracker.
final class RecordingSink: AutoTrackSink, Sendable {
    private struct Recorded {
        var events: [RecordedEvent] = []
        var calls: [String] = []
        var startedChanges: [Bool] = []
    }
    private let recorded = Locked(Recorded())
    let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    var events: [RecordedEvent] { recorded.withLock { $0.events } }
    var calls: [String] { recorded.withLock { $0.calls } }

    func trackAutomatic(_ name: String, properties: Properties, at time: EpochMilliseconds?) -> Bool {
        let wall = time ?? clock.wallMilliseconds()
        recorded.withLock {
            $0.events.append(RecordedEvent(name: name, properties: properties, time: wall))
            $0.calls.append(name)
        }
        return true
    }
    func pauseAllTimers(at now: UInt64?) { recorded.withLock { $0.calls.append("pause") } }
    func resumeAllTimers(at now: UInt64?) { recorded.withLock { $0.calls.append("resume") } }
    func requestFlush() { recorded.withLock { $0.calls.append("flush") } }
    /// Kept apart from `calls`, whose sequences the lifecycle tests compare whole.
    func appStartedChanged(_ started: Bool) { recorded.withLock { $0.startedChanges.append(started) } }
    var startedChanges: [Bool] { recorded.withLock { $0.startedChanges } }
    func flushAndWait(timeout: Duration) -> Bool {
        recorded.withLock { $0.calls.append("sync") }
        return true
    }
}

extension ManualClock {
    /// 2026-01-01T00:00:00Z, the simulation epoch.
    static func lifecycleTest() -> ManualClock { ManualClock(wall: 1_767_225_600_000, monotonic: .seconds(5)) }

    var instant: LifecycleInstant { LifecycleInstant(wall: wallMilliseconds(), monotonic: UInt64(now().nanoseconds)) }
}

/// A fresh temporary storage directory per test.
func makeTemporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("spoor-lifecycle-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// One process's auto-tracking over a storage directory, driven by hand.
///
/// The `.tracker` backend goes through the public ``Tracker`` API (events read back from its store); the
/// `.controller` backend drives the lifecycle controller with a recording sink, to see timer and flush
/// calls too.
struct LifecycleHarness {
    enum Backend: Sendable { case tracker, controller }

    let clock: ManualClock
    let directory: URL
    let controller: AutoTrackController
    let tracker: Tracker?
    let sink: RecordingSink?
    private let store: InMemoryEventStore?

    init(
        _ backend: Backend = .tracker, directory: URL = makeTemporaryDirectory(), clock: ManualClock = .lifecycleTest(),
        isFirstLaunch: Bool = true, enabled: Set<AutoTrackEventKind> = Set(AutoTrackEventKind.allCases)
    ) async throws {
        self.directory = directory
        self.clock = clock
        switch backend {
        case .controller:
            let sink = RecordingSink(clock: clock)
            let options = LifecycleOptions(storageDirectory: directory, enabled: enabled, heartbeatInterval: nil)
            controller = AutoTrackController(options: options, now: { [clock] in clock.instant })
            controller.connect(sink, isFirstLaunch: isFirstLaunch)
            self.sink = sink
            store = nil
            tracker = nil
        case .tracker:
            var configuration = Configuration(storageDirectory: directory)
            configuration.clock = clock
            configuration.autoTrack.heartbeatInterval = nil
            configuration.autoTrack.events = AutoTrackOptions(enabled.map(\.option))
            let store = InMemoryEventStore()
            // The first launch on an install is decided by the tracker's persisted state.
            let fresh = (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.isEmpty ?? true
            if !isFirstLaunch, fresh {
                let earlier = try Tracker(configuration: configuration, store: InMemoryEventStore())
                if !(await earlier.stored()) { Issue.record("the earlier tracker's writer did not save its state within \(testBound)") }
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(StorageLayout.lifecycleCheckpointName))
            }
            let tracker = try Tracker(configuration: configuration, store: store)
            self.tracker = tracker
            controller = tracker.lifecycle
            self.store = store
            sink = nil
        }
    }

    func send(_ signals: LifecycleSignal...) async {
        for signal in signals {
            if let tracker {
                // `willTerminate` makes the tracker wait for its writer (the app gets no later chance): on a thread
                // of its own, as on the app's main thread, never on one that the process's other tests need.
                await onThreadOfItsOwn { tracker.handle(signal) }
            } else {
                controller.handle(signal)
            }
        }
        await settle()
    }

    /// Waits until the tracker's writer has stored what the last action produced and saved the state, so
    /// that each action takes full effect before the next (as in `spoor simulate`), and a process "killed"
    /// between two actions has handed everything over — whatever the load on the machine. A writer that
    /// does not get there within the bound fails the test (never the whole test process).
    private func settle() async {
        guard let tracker else { return }
        if !(await tracker.stored()) { Issue.record("the tracker's writer did not store the events within \(testBound)") }
    }

    func advance(_ milliseconds: Int64) { clock.advance(by: .milliseconds(milliseconds)) }

    func appear(_ id: String, url: String? = nil, title: String? = nil) async {
        let page = PageInfo(screenName: id, title: title ?? "Title \(id)", url: url ?? "app://\(id)")
        if let tracker { tracker.pageAppear(id, page: page) } else { controller.pageAppear(id: id, info: page) }
        await settle()
    }

    func disappear(_ id: String) async {
        if let tracker { tracker.pageDisappear(id) } else { controller.pageDisappear(id: id) }
        await settle()
    }

    func click(_ click: AppClick) async {
        if let tracker { tracker.trackClick(click) } else { controller.click(click) }
        await settle()
    }

    func heartbeat() async {
        if let tracker { tracker.noteAlive() } else { controller.heartbeat() }
        await settle()
    }

    /// `shutdown()`: the session ends and the log closes; later signals change nothing.
    func shutdown() async {
        if let tracker {
            if !(await tracker.shutdown(timeout: testBound)) { Issue.record("shutdown() did not finish within \(testBound)") }
        } else {
            controller.shutdown()
        }
    }

    func crash(reason: String) async {
        if let tracker { tracker.recordCrash(reason: reason) } else { controller.recordCrash(reason: reason) }
        await settle()
    }

    /// The auto events so far, in order (after the tracker's writer stored them).
    var events: [RecordedEvent] {
        get async {
            if let sink { return sink.events }
            guard tracker != nil, let store else { return [] }
            await settle()
            return store.events.filter { $0.lib.method == .autoTrack }.map {
                RecordedEvent(name: $0.name, properties: $0.properties, time: $0.time)
            }
        }
    }

    var names: [String] {
        get async { await events.map(\.name) }
    }

    /// Timer, flush and sync calls interleaved with event names (controller backend only).
    var calls: [String] { sink?.calls ?? [] }

    /// Cold start as L1.
    func coldStart() async { await send(.didFinishLaunching(.inactive), .didBecomeActive) }
    func goHome() async { await send(.willResignActive, .didEnterBackground) }
    func hotStart() async { await send(.willEnterForeground, .didBecomeActive) }
}
