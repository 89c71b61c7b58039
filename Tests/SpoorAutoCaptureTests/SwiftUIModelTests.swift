import SpoorAutoCapture
import SpoorModel
import SpoorTestSupport
import SpoorTracker
import Testing

/// What the SwiftUI modifiers and the alert hook hand the model: built nodes, checked through a real tracker.
@Suite("SwiftUI controls and alert actions")
struct SwiftUIModelTests {
    @Test func swiftUIControlsOnASpoorPage() async throws {
        let f = try Fixture()
        let page = CaptureRules.swiftUIPage(screenName: "Checkout", title: "Pay", url: nil, properties: ["cart": "3"])
        let token = FakeController()  // what the modifier's state holds for the page's lifetime
        f.capture.pageAppeared(page, object: token)
        let controls: [SpoorControl] = [.button, .toggle(wasOn: false), .navigationLink, .tapGesture]
        for control in controls {
            f.capture.clicked(CaptureRules.swiftUIControl(control, title: "Pay now", id: "pay", properties: ["method": "card"], page: page))
            f.clock.advance(by: .seconds(1))
        }
        let events = await f.events()
        withExtendedLifetime(token) {}
        #expect(events.first?.string("$screen_name") == "Checkout")
        #expect(events.first?.string("$url") == "Checkout")
        #expect(events.first?.string("cart") == "3")
        let clicks = events.filter { $0.name == "$AppClick" }
        #expect(clicks.map { $0.string("$element_type") } == ["SwiftUI.Button", "SwiftUI.Toggle", "SwiftUI.NavigationLink", "SwiftUI.TapGesture"])
        #expect(clicks.map { $0.string("$element_content") } == ["Pay now", "checked", "Pay now", "Pay now"])
        #expect(clicks.allSatisfy { $0.string("$element_path") == "SwiftUI.View/\($0.string("$element_type") ?? "")[0]" })
        #expect(clicks.allSatisfy { $0.string("$screen_name") == "Checkout" && $0.string("$title") == "Pay" })
        #expect(clicks.allSatisfy { $0.string("$element_id") == "pay" && $0.string("method") == "card" && $0.string("cart") == "3" })
    }

    @Test func aDisabledControlGivesNoClick() {
        // Its simultaneous tap gesture still sees the tap; the control does nothing.
        let page = CaptureRules.swiftUIPage(screenName: "Checkout", title: nil, url: nil, properties: [:])
        #expect(CaptureRules.swiftUIClick(.button, title: "Pay", id: nil, properties: [:], page: page, isEnabled: false) == nil)
        let click = CaptureRules.swiftUIClick(.button, title: "Pay", id: nil, properties: [:], page: page, isEnabled: true)
        #expect(click.map(CaptureRules.elementContent) == "Pay")
    }

    @Test func alertActionsGoToThePageUnderTheAlert() async throws {
        let f = try Fixture()
        let (root, _) = homeTree()
        let home = FakeController()
        f.capture.pageAppeared(try #require(root.page), object: home)
        f.capture.clicked(CaptureRules.alertAction(title: "Delete"))
        let click = try #require(await f.events().last)
        withExtendedLifetime(home) {}
        #expect(click.string("$element_type") == "UIAlertAction")
        #expect(click.string("$element_content") == "Delete")
        #expect(click.string("$element_path") == "UIAlertController/UIAlertAction[0]")
        #expect(click.string("$screen_name") == "MyApp.HomeViewController")
    }

    @Test func aMissingEnvironmentCaptureWarnsOnceInDebugBuilds() {
        let log = LogCapture()
        let first = AutoCapture.warnMissingEnvironment(logger: log.logger)
        let second = AutoCapture.warnMissingEnvironment(logger: log.logger)
        #if DEBUG
        #expect(first && !second)
        #expect(log.all.count == 1)
        #expect(log.contains(.warning, "no AutoCapture in its environment"))
        #else
        #expect(!first && !second && log.all.isEmpty)
        #endif
    }
}
