import Foundation
import Synchronization
import SpoorModel
import SpoorSystem
import SpoorTestSupport
import SpoorTracker
import Testing

import SpoorAutoCapture

/// From fake trees and fake controllers through ``AutoCapture`` and a real tracker to the events it records.
@Suite("auto-capture through a real tracker")
struct AutoCaptureTests {
    @Test func pagesAndClicksAreRecorded() async throws {
        let f = try Fixture()
        let (root, save) = homeTree()
        let home = FakeController()
        f.capture.pageAppeared(try #require(root.page), object: home)
        f.capture.pageAppeared(FakePage(Chain.navigation, shownChild: root.page), object: FakeController())
        f.capture.clicked(save)
        f.clock.advance(by: .milliseconds(50))
        f.capture.clicked(save)  // within 100 ms: the tracker's debounce counts it once
        f.clock.advance(by: .milliseconds(200))
        f.capture.clicked(save)
        f.clock.advance(by: .seconds(2))
        f.capture.pageDisappeared(object: home)
        let events = await f.events()
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppClick", "$AppPageLeave"])
        #expect(events[0].string("$screen_name") == "MyApp.HomeViewController")
        #expect(events[0].string("$title") == "Home")
        #expect(events[0].string("$url") == "MyApp.HomeViewController")
        #expect(events[1].string("$element_type") == "UIButton")
        #expect(events[1].string("$element_content") == "Save")
        #expect(events[1].string("$element_id") == "save")
        #expect(events[1].string("$element_path") == "UIView/UIStackView[0]/UIButton[0]")
        #expect(events[1].string("$screen_name") == "MyApp.HomeViewController")
        #expect(events[3].double("event_duration") == 2.25)
    }

    @Test func nothingIsCapturedUnlessAutoCaptureAsks() async throws {
        let off = try Fixture { $0.autoTrack.capture = [] }
        let (root, save) = homeTree()
        off.capture.pageAppeared(try #require(root.page), object: FakeController())
        off.capture.clicked(save)
        _ = off.capture.actionSent(by: .view(.plain), event: .touchEnded, view: { save }, perform: { true })
        #expect(await off.events().isEmpty)

        let clicksOnly = try Fixture { $0.autoTrack.capture = .clicks }
        clicksOnly.capture.pageAppeared(try #require(root.page), object: FakeController())
        clicksOnly.capture.clicked(save)
        #expect(await clicksOnly.events().map(\.name) == ["$AppClick"])
    }

    @Test func referrerIsThePreviousPagesURLWhichDefaultsToItsScreenName() async throws {
        let f = try Fixture()
        let list = FakeController(), detail = FakeController(), product = FakeController()
        f.capture.pageAppeared(FakePage(Chain.page("MyApp.ListViewController"), parent: Chain.navigation), object: list)
        f.capture.pageAppeared(FakePage(Chain.page("MyApp.ProductViewController"), parent: Chain.navigation, customPage: productPage), object: product)
        f.capture.pageAppeared(FakePage(Chain.page("MyApp.DetailViewController"), parent: Chain.navigation), object: detail)
        let views = await f.events().filter { $0.name == "$AppViewScreen" }
        withExtendedLifetime([list, product, detail]) {}
        #expect(views.map { $0.string("$referrer") } == [nil, "MyApp.ListViewController", "app://product/42"])
        #expect(views[1].string("$url") == "app://product/42")
        #expect(views[1].string("product_id") == "42")
        #expect(views[2].string("$referrer_title") == "Product 42")
    }

    @Test func childControllersArePagesOnlyWithChildPages() async throws {
        let banner = FakePage(Chain.page("MyApp.BannerViewController"), parent: Chain.page("MyApp.HomeViewController"))
        let f = try Fixture()
        f.capture.pageAppeared(banner, object: FakeController())
        #expect(await f.events().isEmpty)
        let children = try Fixture { $0.autoTrack.capture = [.childPages] }
        children.capture.pageAppeared(banner, object: FakeController())
        #expect(await children.events().map { $0.string("$screen_name") } == ["MyApp.BannerViewController"])
    }

    @Test func aFreedPageLeavesTimedToItsLastSightingAndNeverHoldsBackTheNextOne() async throws {
        let f = try Fixture()
        let (root, save) = homeTree()
        var home: FakeController? = FakeController()
        weak let freed = home
        f.capture.pageAppeared(try #require(root.page), object: try #require(home))
        f.clock.advance(by: .seconds(2))
        f.capture.clicked(save)  // home is alive here: its last sighting
        home = nil  // freed without viewDidDisappear
        #expect(freed == nil)
        f.clock.advance(by: .seconds(5))
        let (cartRoot, checkout) = homeTree("MyApp.CartViewController", title: "Cart")
        let cart = FakeController()
        f.capture.pageAppeared(try #require(cartRoot.page), object: cart)
        // A click with no page of its own goes to the live page, never the freed one.
        f.capture.clicked(FakeView("UIButton", text: "Floating"))
        f.capture.clicked(checkout)
        let events = await f.events()
        withExtendedLifetime(cart) {}
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppPageLeave", "$AppViewScreen", "$AppClick", "$AppClick"])
        let leave = events[2]
        #expect(leave.string("$screen_name") == "MyApp.HomeViewController")
        #expect(leave.double("event_duration") == 2)
        #expect(leave.time == f.wall(after: 2))
        #expect(events[3].string("$screen_name") == "MyApp.CartViewController")
        #expect(events[3].string("$referrer") == "MyApp.HomeViewController")
        #expect(events[4].string("$screen_name") == "MyApp.CartViewController")
        #expect(events[5].string("$screen_name") == "MyApp.CartViewController")
    }

    @Test func eachControllerInstanceIsItsOwnPage() async throws {
        // Ids come from the instance, never its address: a new controller is a new page even where an old
        // one was, and the same one appearing twice is one page.
        let f = try Fixture()
        let page = FakePage(Chain.page("MyApp.ItemViewController"), parent: Chain.navigation)
        var first: FakeController? = FakeController()
        f.capture.pageAppeared(page, object: try #require(first))
        f.capture.pageAppeared(page, object: try #require(first))
        first = nil
        for _ in 0..<3 {
            let next = FakeController()
            f.capture.pageAppeared(page, object: next)
            f.capture.pageDisappeared(object: next)
        }
        let names = await f.events().map(\.name)
        #expect(names.filter { $0 == "$AppViewScreen" }.count == 4)
        #expect(names.filter { $0 == "$AppPageLeave" }.count == 4)
    }

    @Test func aClickIsRecordedBeforeItsActionRuns() async throws {
        let f = try Fixture()
        let (root, save) = homeTree()
        let home = FakeController(), next = FakeController()
        f.capture.pageAppeared(try #require(root.page), object: home)
        let (nextRoot, _) = homeTree("MyApp.ReceiptViewController", title: "Receipt")
        // The action pops the page (its views leave the window) and shows another: the click still belongs to
        // the page it was made on.
        let handled = f.capture.actionSent(by: .view(.plain), event: .touchEnded, view: { save }) {
            save.parent?.parent = nil
            f.capture.pageDisappeared(object: home)
            f.capture.pageAppeared(nextRoot.page!, object: next)
            return true
        }
        #expect(handled)
        let events = await f.events()
        withExtendedLifetime(next) {}
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppPageLeave", "$AppViewScreen"])
        #expect(events[1].string("$screen_name") == "MyApp.HomeViewController")
        #expect(events[1].string("$element_path") == "UIView/UIStackView[0]/UIButton[0]")
    }

    @Test func actionsFromCodeAreClicksOnlyForValueControls() async throws {
        let f = try Fixture()
        let (root, save) = homeTree()
        let toggle = root.add(FakeView("UISwitch", kind: .toggle(isOn: true)))
        var snapshots = 0
        var performed = 0
        func send(_ sender: ActionSender, _ event: ActionEvent, _ view: FakeView?) {
            f.capture.actionSent(by: sender, event: event, view: { snapshots += 1; return view }, perform: { performed += 1 })
        }
        send(.view(.plain), .noEvent, save)  // sendActions(for:) from code
        send(.view(.plain), .otherEvent, save)  // touch down
        send(.view(toggle.kind), .noEvent, toggle)  // a value control, from code: counts
        send(.barItem, .touchEnded, nil)  // the item after its button: never
        f.clock.advance(by: .seconds(1))
        send(.view(.plain), .touchEnded, save)
        #expect(performed == 5)
        #expect(snapshots == 2)  // only what is a click is snapshotted
        let clicks = await f.events()
        #expect(clicks.map { $0.string("$element_type") } == ["UISwitch", "UIButton"])
        #expect(clicks[0].string("$element_content") == "checked")
    }

    @Test func ignoredPagesGetNoClicksUnlessTheAppTracksThemItself() async throws {
        let f = try Fixture { $0.autoTrack.ignore = AutoTrackIgnoreList(screenNames: ["MyApp.SplashViewController"]) }
        let (splashRoot, skip) = homeTree("MyApp.SplashViewController", title: "Welcome")
        let splash = FakeController(), pinController = FakeController()
        f.capture.pageAppeared(try #require(splashRoot.page), object: splash)
        f.capture.clicked(skip)
        f.capture.clicked(FakeView("UIButton", text: "No page"))  // falls to the current page: ignored too
        f.capture.trackClick(on: skip)  // explicit: recorded
        let pin = FakeView("UIView")
        pin.page = FakePage(Chain.page("MyApp.PinViewController"), ignoresAutoCapture: true)
        let digit = pin.add(FakeView("UIButton", text: "1"))
        f.capture.pageAppeared(try #require(pin.page), object: pinController)
        f.capture.clicked(digit)
        let events = await f.events()
        withExtendedLifetime([splash, pinController]) {}
        #expect(events.map(\.name) == ["$AppClick"])
        #expect(events[0].string("$screen_name") == "MyApp.SplashViewController")
    }

    @Test func explicitCallsWorkWithoutAutoCaptureOrForSkippedControllers() async throws {
        let f = try Fixture { $0.autoTrack.capture = [] }
        let child = FakePage(Chain.page("MyApp.MapViewController"), parent: Chain.page("MyApp.HomeViewController"))
        let map = FakeController()
        f.capture.trackPage(child, object: map)
        let hidden = FakeView("UIButton", text: "Hidden")
        hidden.isHidden = true
        f.capture.trackClick(on: hidden)
        f.clock.advance(by: .seconds(3))
        f.capture.pageDisappeared(object: map)
        let events = await f.events()
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppPageLeave"])
        #expect(events[1].string("$screen_name") == "MyApp.MapViewController")
        #expect(events[2].double("event_duration") == 3)
    }

    @Test func customPropertiesOfViewsAndPagesAreAddedAndPresetOnesWin() async throws {
        let f = try Fixture()
        let root = FakeView("UIView")
        root.page = FakePage(Chain.page("MyApp.ProductViewController"), customPage: productPage)
        let buy = root.add(FakeView("UIButton", text: "Buy"))
        buy.customProperties = ["sku": "tea-1", "product_id": "from-view", "$element_type": "spoofed"]
        let product = FakeController()
        f.capture.pageAppeared(try #require(root.page), object: product)
        f.capture.clicked(buy)
        let events = await f.events()
        withExtendedLifetime(product) {}
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick"])
        #expect(events[0].string("product_id") == "42")
        let click = events[1]
        #expect(click.string("sku") == "tea-1")
        #expect(click.string("product_id") == "from-view")
        #expect(click.string("$element_type") == "UIButton")
    }

    @Test func explicitClicksFindTheirInstalledCapture() throws {
        let f = try Fixture()
        let other = try Fixture()
        f.capture.makeInstalled()
        #expect(AutoCapture.installed === f.capture)
        #expect(AutoCapture.capture(for: f.tracker) === f.capture)
        #expect(AutoCapture.capture(for: other.tracker) !== f.capture)
        #expect(AutoCapture.capture(for: other.tracker).tracker === other.tracker)
    }

    @Test func aPageTrackedWithoutAnInstalledCaptureLeavesThroughTheHooksCapture() async throws {
        // tracker.trackPage(_:) before any install goes through a capture made for the call; the hooks'
        // capture, made later, sees the controller disappear and leaves the page.
        let f = try Fixture()
        let map = FakeController()
        AutoCapture.capture(for: f.tracker).trackPage(FakePage(Chain.page("MyApp.MapViewController"), parent: Chain.page("MyApp.Home")), object: map)
        f.clock.advance(by: .seconds(4))
        let hooks = AutoCapture(tracker: f.tracker)
        hooks.pageDisappeared(object: map)
        let events = await f.events()
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppPageLeave"])
        #expect(events.last?.double("event_duration") == 4)
    }

    @Test func aSecondCaptureKeepsTheFirstOnesPages() async throws {
        // Installing a new capture for the same tracker switches the hooks to it; the pages shown before
        // still leave, once, and clicks still name them.
        let f = try Fixture()
        let (root, save) = homeTree()
        let home = FakeController()
        f.capture.pageAppeared(try #require(root.page), object: home)
        let second = AutoCapture(tracker: f.tracker)
        second.pageAppeared(try #require(root.page), object: home)  // the same controller: the same page
        second.clicked(FakeView("UIButton", text: "Floating"))
        f.clock.advance(by: .seconds(1))
        second.pageDisappeared(object: home)
        f.capture.pageDisappeared(object: home)
        let events = await f.events()
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppPageLeave"])
        #expect(events[1].string("$screen_name") == "MyApp.HomeViewController")
        withExtendedLifetime(save) {}
    }

    @Test func appCodeTheTrackerRunsCanCallBackIntoTheCapture() async throws {
        // A dynamic super property provider runs inside the tracker's handling of a click; one that tracks a
        // click itself must neither deadlock on the capture's lock nor reach the tracker inside its own call:
        // its click is queued behind the one under way.
        let f = try Fixture()
        let (root, save) = homeTree()
        let home = FakeController()
        f.capture.pageAppeared(try #require(root.page), object: home)
        let banner = FakeView("UIButton", id: "banner", text: "Banner").node()
        let calls = CallCount()
        let capture = f.capture
        f.tracker.registerDynamicSuperProperties {
            if calls.next() == 1 { capture.trackClick(on: banner) }
            return [:]
        }
        // On a thread of its own, awaited with a bound, so that a deadlock fails the test instead of hanging the run.
        let click = save.node()
        let returned: Void? = await finished { await onThreadOfItsOwn { capture.clicked(click) } }
        try #require(returned != nil, "the click never returned: a deadlock")
        let events = await f.events()
        withExtendedLifetime(home) {}
        #expect(events.map(\.name) == ["$AppViewScreen", "$AppClick", "$AppClick"])
        #expect(events.dropFirst().map { $0.string("$element_id") } == ["save", "banner"])
    }

    @Test @MainActor func aHookOnTheMainThreadRunsOnTheMainActor() throws {
        // On Linux the main actor's executor need not be the process's main thread, so the test says where it is.
        let f = try Fixture()
        #expect(AutoCapture.enter(.actions, capture: f.capture, isMainThread: true, original: { "original alone" }) { _, _ in "captured" } == "captured")
        #expect(AutoCapture.enter(.actions, capture: nil, isMainThread: true, original: { "original alone" }) { _, _ in "captured" } == "original alone")
        #expect(!f.log.contains(.warning, "off the main thread"))
    }

    @Test func aHookOffTheMainThreadCapturesNothingAndLogsOnce() async throws {
        let f = try Fixture()
        let capture = f.capture
        let results = await Task.detached {
            (Thread.isMainThread, (0..<3).map { _ in
                AutoCapture.enter(.cellSelection, capture: capture, isMainThread: Thread.isMainThread, original: { "original alone" }) { _, _ in "captured" }
            })
        }.value
        try #require(!results.0)
        #expect(results.1 == ["original alone", "original alone", "original alone"])
        #expect(f.log.all.filter { $0.message.contains("the cellSelection hook was reached off the main thread") }.count == 1)
    }

    @Test func aHookOffTheMainThreadIsLoggedOnce() throws {
        let f = try Fixture()
        f.capture.hookReachedOffMainThread("actions")
        f.capture.hookReachedOffMainThread("actions")
        f.capture.hookReachedOffMainThread("pages")
        #expect(f.log.all.filter { $0.message.contains("the actions hook was reached off the main thread") }.count == 1)
        #expect(f.log.contains(.warning, "the pages hook was reached off the main thread"))
    }
}

/// Counts calls from any thread.
final class CallCount: Sendable {
    private let calls = Atomic(0)

    /// Counts one more call and returns how many there have been.
    func next() -> Int { calls.add(1, ordering: .relaxed).newValue }

    /// How many calls there have been.
    var count: Int { calls.load(ordering: .relaxed) }
}
