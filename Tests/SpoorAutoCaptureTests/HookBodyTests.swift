import SpoorModel
import SpoorTracker
import Testing

import SpoorAutoCapture

/// The bodies of the page and action hooks, as the glue's blocks run them, with fake live views and
/// controllers read through the same kind of readers the glue gives them.
@Suite("page and action hooks")
@MainActor
struct HookBodyTests {
    /// The glue's action reader, over fake views: a sender that is a view gives its kind and snapshot.
    final class FakeEvent {
        let touches: Bool, ended: Bool
        init(touches: Bool = true, ended: Bool) {
            self.touches = touches
            self.ended = ended
        }
    }

    final class BarItem {}

    static let actions = ActionReader<AnyObject, FakeEvent>(
        sender: { sender in
            (sender is BarItem, (sender as? LiveView).map { CaptureRules.kind(of: ViewNode(typeNames: $0.typeNames, kind: $0.kind)) })
        },
        event: { ($0.touches, $0.ended) },
        node: { ($0 as? LiveView).map { ViewSnapshots.node(of: $0, reader: LiveView.reader) } })

    /// A home page's root view with a button, a switch and a text field.
    func home() -> (root: LiveView, buy: LiveView, toggle: LiveView, field: LiveView) {
        let root = LiveView("UIView")
        root.page = FakePage(Chain.page("MyApp.HomeViewController"), parent: Chain.navigation).node()
        let buy = root.add(LiveView("UIButton", id: "buy", text: "Buy"))
        let toggle = root.add(LiveView("UISwitch", kind: .toggle(isOn: true)))
        let field = root.add(LiveView("UITextField"))
        return (root, buy, toggle, field)
    }

    @Test func thePageViewComesBeforeWhatViewDidAppearTracksAndTheLeaveAfterWhatViewDidDisappearTracks() async throws {
        let f = try Fixture()
        let navigation = LiveController(Chain.navigation)
        let detail = navigation.show(LiveController(Chain.page("MyApp.DetailViewController"), title: "Detail"))
        let tracker = f.tracker
        AutoCapture.viewAppearanceHook(appeared: true, controller: detail, isMainThread: true, capture: f.capture, reader: LiveController.reader) {
            tracker.track("DetailLoaded")  // the app's viewDidAppear
        }
        f.clock.advance(by: .seconds(2))
        AutoCapture.viewAppearanceHook(appeared: false, controller: detail, isMainThread: true, capture: f.capture, reader: LiveController.reader) {
            tracker.track("DetailSaved")  // the app's viewDidDisappear
        }
        let events = await f.events(also: ["DetailLoaded", "DetailSaved"])
        #expect(events.map(\.name) == ["$AppViewScreen", "DetailLoaded", "DetailSaved", "$AppPageLeave"])
        #expect(events.first?.string("$screen_name") == "MyApp.DetailViewController")
        #expect(events.last?.double("event_duration") == 2)
    }

    @Test func aContainerIsNoPageButItsOriginalStillRuns() async throws {
        let f = try Fixture()
        let navigation = LiveController(Chain.navigation)
        var ran = 0
        AutoCapture.viewAppearanceHook(appeared: true, controller: navigation, isMainThread: true, capture: f.capture, reader: LiveController.reader) { ran += 1 }
        #expect(ran == 1)
        #expect(await f.events().isEmpty)
    }

    @Test func aTapSentThroughSendActionIsAClickBeforeTheActionAndFromCodeIsNot() async throws {
        let f = try Fixture()
        let (root, buy, _, _) = home()
        var log: [String] = []
        func send(_ sender: AnyObject?, _ event: FakeEvent?) {
            let handled = AutoCapture.sendActionHook(sender: sender, event: event, isMainThread: true, capture: f.capture, reader: Self.actions) {
                log.append("action")
                return true
            }
            #expect(handled)
        }
        send(buy, nil)  // sendActions(for:) from code
        send(buy, FakeEvent(ended: false))  // touch down
        send(BarItem(), FakeEvent(ended: true))  // the item after its button
        send(buy, FakeEvent(touches: false, ended: true))  // a key press
        send(buy, FakeEvent(ended: true))
        #expect(log.count == 5)
        let clicks = await f.events()
        #expect(clicks.map { $0.string("$element_id") } == ["buy"])
        #expect(clicks.first?.string("$screen_name") == "MyApp.HomeViewController")
        withExtendedLifetime(root) {}
    }

    @Test func aControlsUIActionIsAClick() async throws {
        // UIButton(primaryAction:), addAction(_:for:): UIKit runs them through UIControl.sendAction(_:), never
        // through UIApplication.sendAction.
        let f = try Fixture()
        let (root, buy, toggle, field) = home()
        var ran = 0
        for control in [buy, toggle, field] {
            AutoCapture.actionHandlerHook(control: control as AnyObject, isMainThread: true, capture: f.capture, reader: Self.actions) { ran += 1 }
            f.clock.advance(by: .seconds(1))
        }
        #expect(ran == 3)
        let clicks = await f.events()
        #expect(clicks.map { $0.string("$element_type") } == ["UIButton", "UISwitch"])
        #expect(clicks.map { $0.string("$element_content") } == ["Buy", "checked"])
        withExtendedLifetime(root) {}
    }

    @Test func aSwitchUnderASwiftUIToggleIsCountedOnceByItsSpoorClick() async throws {
        // SwiftUI draws a Toggle with a UISwitch that reaches sendAction too: only .spoorClick counts it.
        let f = try Fixture()
        let window = LiveView("UIView")
        let hosting = window.add(LiveView("_TtGC7SwiftUI14_UIHostingViewV5MyApp8RootView_"))
        let platform = hosting.add(LiveView("_TtC7SwiftUIP33_A34643117F00277B93DEBAB70EC0697116_UIShapeHitTestingView"))
        let toggle = platform.add(LiveView("UISwitch", kind: .toggle(isOn: true)))
        _ = AutoCapture.sendActionHook(sender: toggle, event: FakeEvent(ended: true), isMainThread: true, capture: f.capture, reader: Self.actions) { true }
        AutoCapture.actionHandlerHook(control: toggle as AnyObject, isMainThread: true, capture: f.capture, reader: Self.actions) {}
        let page = CaptureRules.swiftUIPage(screenName: "Settings", title: nil, url: nil, properties: [:])
        f.capture.clicked(CaptureRules.swiftUIControl(.toggle(wasOn: false), title: "Wi-Fi", id: nil, properties: [:], page: page))
        let clicks = await f.events()
        #expect(clicks.map { $0.string("$element_type") } == ["SwiftUI.Toggle"])
        withExtendedLifetime(window) {}
    }

    @Test func aSwiftUIListRowGivesNoEmptyCellClick() async throws {
        // A List's rows are cells of SwiftUI's own collection view: the row's .spoorClick is its click.
        let f = try Fixture()
        let list = FakeView(["SwiftUI.UpdateCoalescingCollectionView", "UICollectionView", "UIScrollView", "UIView"])
        let cell = list.add(FakeView(["SwiftUI.ListCollectionViewCell", "UICollectionViewCell", "UIView"]))
        cell.indexPath = CellIndexPath(section: 0, item: 0)
        let delegate = FakeController()
        f.capture.cellSelected(
            in: list, at: CellIndexPath(section: 0, item: 0), receiver: delegate, listDelegate: delegate, cell: { cell }, perform: {})
        #expect(await f.events().isEmpty)
    }

    @Test func aHookReachedBeforeAnyInstallRunsTheOriginalAlone() async throws {
        let f = try Fixture()
        let (root, buy, _, _) = home()
        let handled = AutoCapture.sendActionHook(sender: buy, event: FakeEvent(ended: true), isMainThread: true, capture: nil, reader: Self.actions) { true }
        #expect(handled)
        #expect(await f.events().isEmpty)
        withExtendedLifetime(root) {}
    }
}
