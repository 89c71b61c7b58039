import SpoorModel
import SpoorTracker
import Testing

import SpoorAutoCapture

/// The rules behind what the glue reads: each a pure function the glue calls with what UIKit holds.
@Suite("UIKit rules")
struct UIKitRulesTests {
    @Test func namesStartAtTheClassTheObjectReports() {
        // Key-value observing, RxCocoa and Aspects subclass the object and make it report the original
        // class, as NSStringFromClass([object class]) shows it.
        let cart = ["MyApp.CartViewController", "UIViewController", "UIResponder", "NSObject"]
        #expect(CaptureRules.typeNames(isa: ["NSKVONotifying_MyApp.CartViewController"] + cart, reported: "MyApp.CartViewController") == cart)
        #expect(CaptureRules.typeNames(isa: ["_RX_namespace_MyApp.CartViewController"] + cart, reported: "MyApp.CartViewController") == cart)
        #expect(CaptureRules.typeNames(isa: ["MyApp.CartViewController_Aspects_"] + cart, reported: "MyApp.CartViewController") == cart)
        #expect(CaptureRules.typeNames(isa: cart, reported: "MyApp.CartViewController") == cart)
        // A class reporting something off its chain: the runtime chain, without the observing prefix.
        #expect(CaptureRules.typeNames(isa: ["NSKVONotifying_UIButton", "UIButton"], reported: "Elsewhere") == ["UIButton", "UIButton"])
        // The screen name and element type follow.
        let page = FakePage(CaptureRules.typeNames(isa: ["NSKVONotifying_MyApp.CartViewController"] + cart, reported: "MyApp.CartViewController"))
        #expect(CaptureRules.screenName(page) == "MyApp.CartViewController")
    }

    @Test func swiftUIsClassesAreKnownInEverySpelling() {
        for name in [
            "SwiftUI._UIHostingView<MyApp.RootView>", "_TtC7SwiftUI17HostingScrollView", "_TtGC7SwiftUI14_UIHostingViewV5MyApp8RootView_",
            "_TtCC7SwiftUI17ListCoreCoordinator4Cell", "_TtC7SwiftUIP33_A34643117F00277B93DEBAB70EC0697116_UIShapeHitTestingView",
        ] {
            #expect(CaptureRules.isSwiftUIClass(name), "\(name)")
        }
        for name in ["UISwitch", "MyApp.SwiftUIBridge", "_TtC5MyApp7SwiftUI", "_UIHostingView", "_TtC9SwiftUIKit4View"] {
            #expect(!CaptureRules.isSwiftUIClass(name), "\(name)")
        }
        let hosted = FakeView(["_TtGC7SwiftUI14_UIHostingViewV5MyApp8RootView_", "UIView"]).add(FakeView("UIView")).add(FakeView("UISwitch"))
        #expect(CaptureRules.isInsideSwiftUI(hosted))
        #expect(!CaptureRules.isInsideSwiftUI(homeTree().save))
        #expect(!CaptureRules.hooksListDelegate(["SwiftUI.ListCoreCoordinator", "NSObject"]))
        #expect(CaptureRules.hooksListDelegate(["MyApp.OrdersViewController", "UIViewController"]))
    }

    @Test func senderAndEventClassification() {
        #expect(ActionSender.classify(isBarItem: true, viewKind: .plain) == .barItem)
        #expect(ActionSender.classify(isBarItem: false, viewKind: .toggle(isOn: true)) == .view(.toggle(isOn: true)))
        #expect(ActionSender.classify(isBarItem: false, viewKind: nil) == .other)
        #expect(ActionEvent.classify(hasEvent: false, isTouches: false, aTouchEnded: false) == .noEvent)
        #expect(ActionEvent.classify(hasEvent: true, isTouches: true, aTouchEnded: true) == .touchEnded)
        #expect(ActionEvent.classify(hasEvent: true, isTouches: true, aTouchEnded: false) == .otherEvent)
        #expect(ActionEvent.classify(hasEvent: true, isTouches: false, aTouchEnded: true) == .otherEvent)
        // A control's UIAction: a click for controls and value controls, never for text entry or bar items.
        #expect(CaptureRules.isClick(sender: .view(.plain), event: .actionHandler))
        #expect(CaptureRules.isClick(sender: .view(.stepper(value: 1)), event: .actionHandler))
        #expect(CaptureRules.isClick(sender: .view(.slider(value: 0.5, isTracking: false)), event: .actionHandler))
        #expect(!CaptureRules.isClick(sender: .view(.slider(value: 0.5, isTracking: true)), event: .actionHandler))
        #expect(!CaptureRules.isClick(sender: .view(.textInput), event: .actionHandler))
        #expect(!CaptureRules.isClick(sender: .barItem, event: .actionHandler))
    }

    @Test func whatTheGlueReads() {
        #expect(CaptureRules.valueControl(["MyApp.FancySwitch", "UISwitch", "UIControl"]) == .toggle)
        #expect(CaptureRules.valueControl(Chain.view("UISegmentedControl")) == .segmented)
        #expect(CaptureRules.valueControl(Chain.view("UIStepper")) == .stepper)
        #expect(CaptureRules.valueControl(Chain.view("UISlider")) == .slider)
        #expect(CaptureRules.valueControl(Chain.view("UIPageControl")) == .pageControl)
        #expect(CaptureRules.valueControl(Chain.view("UIButton")) == nil)
        // A button's text: its current title, else its configuration's; titleLabel is never read.
        #expect(CaptureRules.buttonText(currentTitle: " Buy ", configurationTitle: "Configured") == "Buy")
        #expect(CaptureRules.buttonText(currentTitle: nil, configurationTitle: "Configured") == "Configured")
        #expect(CaptureRules.buttonText(currentTitle: "", configurationTitle: nil) == nil)
        #expect(CaptureRules.siblingIndex(at: 3, among: ["UIButton", "UILabel", "UIButton", "UIButton"]) == 2)
        #expect(CaptureRules.siblingIndex(at: 1, among: ["UIButton", "UILabel", "UIButton"]) == 0)
        #expect(CaptureRules.siblingIndex(at: 9, among: ["UIButton"]) == 0)
        #expect(CaptureRules.shownChild(ofContainer: ["MyApp.Main"] + Chain.navigation) == .navigationTop)
        #expect(CaptureRules.shownChild(ofContainer: Chain.tabs) == .selectedTab)
        #expect(CaptureRules.shownChild(ofContainer: ["UIPageViewController"] + Chain.controller) == .currentPage)
        #expect(CaptureRules.shownChild(ofContainer: Chain.page("MyApp.Home")) == .none)
        #expect(CaptureRules.showsNavigationItem(parentTypeNames: Chain.navigation))
        #expect(!CaptureRules.showsNavigationItem(parentTypeNames: Chain.tabs))
        #expect(!CaptureRules.showsNavigationItem(parentTypeNames: nil))
        // Content from subviews only for views with no text of their own that carry no value.
        #expect(CaptureRules.contentComesFromSubviews(kind: .cell, text: nil))
        #expect(CaptureRules.contentComesFromSubviews(kind: .plain, text: "  "))
        #expect(!CaptureRules.contentComesFromSubviews(kind: .plain, text: "Save"))
        #expect(!CaptureRules.contentComesFromSubviews(kind: .toggle(isOn: true), text: nil))
        #expect(!CaptureRules.contentComesFromSubviews(kind: .textInput, text: nil))
        #expect(CaptureRules.contributesContent(isHidden: false, ignoresAutoCapture: false))
        #expect(!CaptureRules.contributesContent(isHidden: true, ignoresAutoCapture: false))
        #expect(!CaptureRules.contributesContent(isHidden: false, ignoresAutoCapture: true))
    }
}
