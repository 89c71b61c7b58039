import Foundation
import SpoorAutoCapture
import SpoorModel
import SpoorTesting
import Testing

@testable import SpoorTracker

/// From a fake tree through a real tracker (a temporary storage directory, a manual clock, the tracker's
/// in-memory store) to the events it records.
@Suite("auto-capture through a real tracker")
struct AutoCaptureTrackerTests {
    final class Fixture {
        let directory: URL
        let clock = ManualClock()
        let store = InMemoryEventStore()
        let tracker: Tracker
        let capture: AutoCapture

        init(_ configure: (inout Configuration) -> Void) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-autocapture-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var configuration = Configuration(storageDirectory: directory)
            configuration.wallClock = clock
            configuration.monotonicClock = clock
            configuration.heartbeatInterval = nil
            configuration.autoTrack = .all
            configure(&configuration)
            tracker = try Tracker(configuration: configuration, store: store)
            capture = AutoCapture(tracker: tracker)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// The events recorded, after a flush and a shutdown (so nothing writes to the directory once the
        /// fixture removes it).
        func events(named names: Set<String>) async -> [Event] {
            await tracker.flush()
            await tracker.shutdown()
            return store.events.filter { names.contains($0.name) }
        }
    }

    private func homeTree() -> (root: FakeView, save: FakeView) {
        let root = FakeView("UIView")
        root.page = FakePage(typeName: "HomeViewController", navigationTitle: "Home")
        let save = root.add(FakeView("UIStackView")).add(FakeView("UIButton", id: "save", text: "Save"))
        return (root, save)
    }

    @Test func pagesAndClicksAreRecorded() async throws {
        let f = try Fixture { $0.autoCapture = [.pages, .clicks] }
        f.tracker.handle(.didBecomeActive)
        let (root, save) = homeTree()
        f.capture.pageAppeared(try #require(root.page), id: "vc-1")
        f.capture.pageAppeared(FakePage(typeName: "UINavigationController"), id: "nav")
        f.capture.clicked(save)
        f.clock.advance(by: .milliseconds(50))
        f.capture.clicked(save)  // within 100 ms: the tracker's debounce counts it once
        f.clock.advance(by: .milliseconds(200))
        f.capture.clicked(save)
        f.clock.advance(by: .seconds(2))
        f.capture.pageDisappeared(id: "vc-1")
        let events = await f.events(named: ["$AppViewScreen", "$AppClick", "$AppPageLeave"])
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppClick", "$AppPageLeave"])
        #expect(events[0].properties["$screen_name"] == .string("HomeViewController"))
        #expect(events[0].properties["$title"] == .string("Home"))
        let click = events[1].properties
        #expect(click["$element_type"] == .string("UIButton"))
        #expect(click["$element_content"] == .string("Save"))
        #expect(click["$element_id"] == .string("save"))
        #expect(click["$element_path"] == .string("UIView/UIStackView[0]/UIButton[0]"))
        #expect(click["$screen_name"] == .string("HomeViewController"))
        #expect(events[3].properties["event_duration"] == .double(2.25))
    }

    @Test func offByDefaultAndPerOption() async throws {
        let off = try Fixture { _ in }
        off.tracker.handle(.didBecomeActive)
        let (root, save) = homeTree()
        off.capture.pageAppeared(try #require(root.page), id: "vc")
        off.capture.clicked(save)
        #expect(await off.events(named: ["$AppViewScreen", "$AppClick"]).isEmpty)

        let clicksOnly = try Fixture { $0.autoCapture = .clicks }
        clicksOnly.tracker.handle(.didBecomeActive)
        clicksOnly.capture.pageAppeared(try #require(root.page), id: "vc")
        clicksOnly.capture.clicked(save)
        #expect(await clicksOnly.events(named: ["$AppViewScreen", "$AppClick"]).map(\.name) == ["$AppClick"])
    }

    @Test func trackerIgnoreListsApplyToCapturedEvents() async throws {
        let f = try Fixture {
            $0.autoCapture = [.pages, .clicks]
            $0.autoTrackIgnore = AutoTrackIgnoreList(screenNames: ["HomeViewController"], elementIDs: ["save"])
        }
        f.tracker.handle(.didBecomeActive)
        let (root, save) = homeTree()
        let other = root.add(FakeView("UIButton", id: "cancel", text: "Cancel"))
        f.capture.pageAppeared(try #require(root.page), id: "vc")
        f.capture.clicked(save)
        f.capture.clicked(other)
        let events = await f.events(named: ["$AppViewScreen", "$AppClick"])
        #expect(events.map(\.name) == ["$AppClick"])
        #expect(events.first?.properties["$element_id"] == .string("cancel"))
    }
}
