import Foundation
import SpoorModel
import Testing
import SpoorTracker

@Suite("Pages P1–P6 and clicks")
struct LifecyclePageTests {
    @Test("P1 a page appearing while started: $AppViewScreen with its properties")
    func viewScreen() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("home", url: "app://home", title: "Home")
        #expect(await harness.names == ["$AppStart", "$AppViewScreen"])
        #expect(await harness.events[1].properties == ["$screen_name": "home", "$title": "Home", "$url": "app://home"])
    }

    @Test("P2 the same page appearing again: nothing new, the timer keeps running")
    func appearAgain() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("home")
        harness.advance(1_000)
        await harness.appear("home")
        harness.advance(1_000)
        await harness.disappear("home")
        #expect(await harness.names == ["$AppStart", "$AppViewScreen", "$AppPageLeave"])
        #expect(await harness.events[2].duration == 2.0)
    }

    @Test("P3 a page disappearing: $AppPageLeave with duration, names and referrer; referrers chain")
    func pageLeave() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("list", url: "app://list", title: "List")
        harness.advance(1_500)
        await harness.appear("detail", url: "app://detail/7", title: "Detail")
        await harness.disappear("list")
        harness.advance(2_250)
        await harness.disappear("detail")
        let detailView = await harness.events[2]
        #expect(detailView.properties["$referrer"] == "app://list")
        #expect(detailView.properties["$referrer_title"] == "List")
        let leave = await harness.events[4]
        #expect(leave.name == "$AppPageLeave")
        #expect(leave.properties == [
            "$screen_name": "detail", "$title": "Detail", "$url": "app://detail/7",
            "$referrer": "app://list", "event_duration": 2.25,
        ])
        #expect(await harness.events[3].duration == 1.5)
        // Leaving a page that is not visible does nothing.
        await harness.disappear("detail")
        #expect(await harness.events.count == 5)
    }

    @Test("P4 several pages at once are timed and left on their own")
    func severalPages() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("parent")
        harness.advance(1_000)
        await harness.appear("child")
        harness.advance(1_000)
        await harness.disappear("child")
        harness.advance(1_000)
        await harness.disappear("parent")
        let leaves = await harness.events.filter { $0.name == "$AppPageLeave" }
        #expect(leaves.map { $0.properties["$screen_name"] } == ["child", "parent"])
        #expect(leaves.map(\.duration) == [1.0, 3.0])
    }

    @Test("P5 the app ending leaves every visible page before $AppEnd; timers restart at the next start")
    func appEndLeavesPages() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("a")
        await harness.appear("b")
        harness.advance(3_000)
        await harness.goHome()
        #expect(await harness.names.suffix(3) == ["$AppPageLeave", "$AppPageLeave", "$AppEnd"])
        harness.advance(3_600_000)  // an hour in the background never counts
        await harness.disappear("a")      // already left at the end: nothing
        await harness.hotStart()
        harness.advance(500)
        await harness.disappear("b")
        #expect(await harness.names.suffix(2) == ["$AppStart", "$AppPageLeave"])
        #expect(await harness.events.last?.duration == 0.5)
        #expect(await harness.events.last?.properties["$screen_name"] == "b")
    }

    @Test("P6 a page appearing during a passive start is held until the user opens the app, after $AppStart")
    func heldDuringPassiveStart() async throws {
        let harness = try await LifecycleHarness()
        await harness.send(.didFinishLaunching(.background))
        await harness.appear("home")
        harness.advance(20_000)
        #expect(await harness.names == ["$AppStartPassively"])
        await harness.hotStart()
        harness.advance(1_000)
        await harness.disappear("home")
        #expect(await harness.names == ["$AppStartPassively", "$AppStart", "$AppViewScreen", "$AppPageLeave"])
        #expect(await harness.events[2].time == harness.events[1].time)
        #expect(await harness.events[3].duration == 1.0)
    }

    @Test("P6 a held page that disappears before the user opens the app leaves no trace")
    func heldPageGone() async throws {
        let harness = try await LifecycleHarness()
        await harness.send(.didFinishLaunching(.background))
        await harness.appear("splash")
        await harness.disappear("splash")
        await harness.hotStart()
        #expect(await harness.names == ["$AppStartPassively", "$AppStart"])
    }

    @Test("Clicks carry the element and the current page")
    func click() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("cart", url: "app://cart", title: "Cart")
        await harness.click(AppClick(
            elementType: "button", elementContent: "Pay", elementID: "pay",
            elementPosition: "0:1", elementPath: "cart/footer/pay"
        ))
        #expect(await harness.events.last?.name == "$AppClick")
        #expect(await harness.events.last?.properties == [
            "$element_type": "button", "$element_content": "Pay", "$element_id": "pay",
            "$element_position": "0:1", "$element_path": "cart/footer/pay",
            "$screen_name": "cart", "$title": "Cart",
        ])
    }

    @Test("Two clicks on the same element within 100 ms count once", arguments: [
        (Int64(0), 1), (Int64(60), 1), (Int64(100), 1), (Int64(101), 2), (Int64(500), 2),
    ])
    func debounce(gap: Int64, expected: Int) async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.appear("cart")
        let button = AppClick(elementType: "button", elementPath: "cart/pay")
        await harness.click(button)
        harness.advance(gap)
        await harness.click(button)
        #expect(await harness.events.filter { $0.name == "$AppClick" }.count == expected)
    }

    @Test("Clicks on different elements within 100 ms all count")
    func differentElements() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        await harness.click(AppClick(elementType: "button", elementPath: "a"))
        harness.advance(10)
        await harness.click(AppClick(elementType: "button", elementPath: "b"))
        harness.advance(10)
        await harness.click(AppClick(elementType: "button", elementPath: "a"))
        #expect(await harness.events.filter { $0.name == "$AppClick" }.count == 3)
    }
}
