import Foundation
import SpoorModel
import SpoorTestSupport
import Testing

import SpoorTracker

@Suite("auto-track ignore lists")
struct IgnoreListTests {
    private func harness(_ ignore: AutoTrackIgnoreList) throws -> Harness {
        try Harness { configuration in
            configuration.autoTrack.events = .all
            configuration.autoTrack.ignore = ignore
        }
    }

    @Test func pagesOnTheListAreNotViewedLeftOrReferred() async throws {
        let h = try harness(AutoTrackIgnoreList(screenNames: ["Splash"]))
        h.tracker.handle(.didBecomeActive)
        h.tracker.pageAppear("splash", page: PageInfo(screenName: "Splash", url: "app://splash"))
        h.tracker.pageDisappear("splash")
        h.tracker.pageAppear("home", page: PageInfo(screenName: "Home", url: "app://home"))
        h.tracker.handle(.didEnterBackground)
        let pages = await h.flushedEvents().filter { $0.name == "$AppViewScreen" || $0.name == "$AppPageLeave" }
        #expect(pages.map(\.name) == ["$AppViewScreen", "$AppPageLeave"])
        #expect(pages.allSatisfy { $0.properties["$screen_name"] == .string("Home") })
        #expect(pages.allSatisfy { $0.properties["$referrer"] == nil })
    }

    @Test func aPageCanOptOutItself() async throws {
        let h = try harness(AutoTrackIgnoreList())
        h.tracker.handle(.didBecomeActive)
        h.tracker.pageAppear("pin", page: PageInfo(screenName: "Pin", ignoresAutoTrack: true))
        h.tracker.trackClick(AppClick(elementType: "UIButton", elementID: "ok", elementPath: "Pin/UIButton"))
        h.tracker.pageDisappear("pin")
        let events = await h.flushedEvents()
        #expect(events.map(\.name) == ["$AppStart", "$AppClick"])
        // Clicks on an ignored page still name it.
        #expect(events.last?.properties["$screen_name"] == .string("Pin"))
    }

    @Test func clicksAreIgnoredByElementTypeOrID() async throws {
        let h = try harness(AutoTrackIgnoreList(elementTypes: ["UISwitch"], elementIDs: ["debug"]))
        h.tracker.trackClick(AppClick(elementType: "UISwitch", elementID: "wifi", elementPath: "a"))
        h.tracker.trackClick(AppClick(elementType: "UIButton", elementID: "debug", elementPath: "b"))
        h.tracker.trackClick(AppClick(elementType: "UIButton", elementID: "save", elementPath: "c"))
        let clicks = await h.flushedEvents(named: "$AppClick")
        #expect(clicks.map { $0.properties["$element_id"] } == [.string("save")])
    }
}
