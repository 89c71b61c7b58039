import Foundation
import SpoorAutoCapture
import SpoorModel
import SpoorTestSupport
import SpoorTesting

import SpoorTracker

/// A real tracker on a temporary storage directory, a manual clock and the tracker's in-memory store, with
/// an ``AutoCapture`` in front of it and its log captured.
final class Fixture {
    let directory: URL
    let clock = ManualClock()
    let store = InMemoryEventStore()
    let log = LogCapture()
    let tracker: Tracker
    let capture: AutoCapture

    init(_ configure: (inout Configuration) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-autocapture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration(storageDirectory: directory)
        configuration.clock = clock
        configuration.autoTrack.heartbeatInterval = nil
        configuration.autoTrack.events = .all
        configuration.autoTrack.capture = [.pages, .clicks]
        configuration.diagnostics.logger = log.logger
        configure(&configuration)
        tracker = try Tracker(configuration: configuration, store: store)
        capture = AutoCapture(tracker: tracker)
        tracker.handle(.didBecomeActive)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The page and click events recorded, and those named `also`, after a flush and a shutdown (so nothing
    /// writes to the directory once the fixture removes it; the shutdown's own page leaves are left out).
    nonisolated(nonsending) func events(also: Set<String> = []) async -> [Event] {
        await tracker.flush()
        let recorded = store.events.filter { also.union(["$AppViewScreen", "$AppClick", "$AppPageLeave"]).contains($0.name) }
        await tracker.shutdown(timeout: testBound)
        return recorded
    }

    /// The wall time `seconds` after the clock's start.
    func wall(after seconds: Int64) -> Int64 { 1_700_000_000_000 + seconds * 1000 }
}

/// A page root view of a content controller in a navigation controller, with a save button in a stack view.
func homeTree(_ name: String = "MyApp.HomeViewController", title: String = "Home") -> (root: FakeView, save: FakeView) {
    let root = FakeView("UIView")
    root.page = FakePage(Chain.page(name), parent: Chain.navigation, navigationItemTitle: title)
    let save = root.add(FakeView("UIStackView")).add(FakeView("UIButton", id: "save", text: "Save"))
    return (root, save)
}

extension Event {
    /// A property's string value, or `nil`.
    func string(_ key: String) -> String? {
        if case .string(let value) = properties[key] { return value }
        return nil
    }

    /// A property's double value, or `nil`.
    func double(_ key: String) -> Double? {
        if case .double(let value) = properties[key] { return value }
        return nil
    }
}
