import Foundation
import SpoorModel
import Testing
@testable import SpoorTracker

@Suite("Pages P1–P6 and clicks")
struct LifecyclePageTests {
    @Test("P1 a page appearing while started: $AppViewScreen with its properties")
    func viewScreen() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("home", url: "app://home", title: "Home")
        #expect(harness.names == ["$AppStart", "$AppViewScreen"])
        #expect(harness.events[1].properties == ["$screen_name": "home", "$title": "Home", "$url": "app://home"])
    }

    @Test("P2 the same page appearing again: nothing new, the timer keeps running")
    func appearAgain() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("home")
        harness.advance(1_000)
        harness.appear("home")
        harness.advance(1_000)
        harness.disappear("home")
        #expect(harness.names == ["$AppStart", "$AppViewScreen", "$AppPageLeave"])
        #expect(harness.events[2].duration == 2.0)
    }

    @Test("P3 a page disappearing: $AppPageLeave with duration, names and referrer; referrers chain")
    func pageLeave() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("list", url: "app://list", title: "List")
        harness.advance(1_500)
        harness.appear("detail", url: "app://detail/7", title: "Detail")
        harness.disappear("list")
        harness.advance(2_250)
        harness.disappear("detail")
        let detailView = harness.events[2]
        #expect(detailView.properties["$referrer"] == "app://list")
        #expect(detailView.properties["$referrer_title"] == "List")
        let leave = harness.events[4]
        #expect(leave.name == "$AppPageLeave")
        #expect(leave.properties == [
            "$screen_name": "detail", "$title": "Detail", "$url": "app://detail/7",
            "$referrer": "app://list", "event_duration": 2.25,
        ])
        #expect(harness.events[3].duration == 1.5)
        // Leaving a page that is not visible does nothing.
        harness.disappear("detail")
        #expect(harness.events.count == 5)
    }

    @Test("P4 several pages at once are timed and left on their own")
    func severalPages() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("parent")
        harness.advance(1_000)
        harness.appear("child")
        harness.advance(1_000)
        harness.disappear("child")
        harness.advance(1_000)
        harness.disappear("parent")
        let leaves = harness.events.filter { $0.name == "$AppPageLeave" }
        #expect(leaves.map { $0.properties["$screen_name"] } == ["child", "parent"])
        #expect(leaves.map(\.duration) == [1.0, 3.0])
    }

    @Test("P5 the app ending leaves every visible page before $AppEnd; timers restart at the next start")
    func appEndLeavesPages() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("a")
        harness.appear("b")
        harness.advance(3_000)
        harness.goHome()
        #expect(harness.names.suffix(3) == ["$AppPageLeave", "$AppPageLeave", "$AppEnd"])
        harness.advance(3_600_000)  // an hour in the background never counts
        harness.disappear("a")      // already left at the end: nothing
        harness.hotStart()
        harness.advance(500)
        harness.disappear("b")
        #expect(harness.names.suffix(2) == ["$AppStart", "$AppPageLeave"])
        #expect(harness.events.last?.duration == 0.5)
        #expect(harness.events.last?.properties["$screen_name"] == "b")
    }

    @Test("P6 a page appearing during a passive start is held until the user opens the app, after $AppStart")
    func heldDuringPassiveStart() {
        let harness = LifecycleHarness()
        harness.send(.didFinishLaunching(.background))
        harness.appear("home")
        harness.advance(20_000)
        #expect(harness.names == ["$AppStartPassively"])
        harness.hotStart()
        harness.advance(1_000)
        harness.disappear("home")
        #expect(harness.names == ["$AppStartPassively", "$AppStart", "$AppViewScreen", "$AppPageLeave"])
        #expect(harness.events[2].time == harness.events[1].time)
        #expect(harness.events[3].duration == 1.0)
    }

    @Test("P6 a held page that disappears before the user opens the app leaves no trace")
    func heldPageGone() {
        let harness = LifecycleHarness()
        harness.send(.didFinishLaunching(.background))
        harness.appear("splash")
        harness.disappear("splash")
        harness.hotStart()
        #expect(harness.names == ["$AppStartPassively", "$AppStart"])
    }

    @Test("Clicks carry the element and the current page")
    func click() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("cart", url: "app://cart", title: "Cart")
        harness.click(AppClick(
            elementType: "button", elementContent: "Pay", elementID: "pay",
            elementPosition: "0:1", elementPath: "cart/footer/pay"
        ))
        #expect(harness.events.last?.name == "$AppClick")
        #expect(harness.events.last?.properties == [
            "$element_type": "button", "$element_content": "Pay", "$element_id": "pay",
            "$element_position": "0:1", "$element_path": "cart/footer/pay",
            "$screen_name": "cart", "$title": "Cart",
        ])
    }

    @Test("Two clicks on the same element within 100 ms count once", arguments: [
        (Int64(0), 1), (Int64(60), 1), (Int64(100), 1), (Int64(101), 2), (Int64(500), 2),
    ])
    func debounce(gap: Int64, expected: Int) {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.appear("cart")
        let button = AppClick(elementType: "button", elementPath: "cart/pay")
        harness.click(button)
        harness.advance(gap)
        harness.click(button)
        #expect(harness.events.filter { $0.name == "$AppClick" }.count == expected)
    }

    @Test("Clicks on different elements within 100 ms all count")
    func differentElements() {
        let harness = LifecycleHarness()
        harness.coldStart()
        harness.click(AppClick(elementType: "button", elementPath: "a"))
        harness.advance(10)
        harness.click(AppClick(elementType: "button", elementPath: "b"))
        harness.advance(10)
        harness.click(AppClick(elementType: "button", elementPath: "a"))
        #expect(harness.events.filter { $0.name == "$AppClick" }.count == 3)
    }
}
