import SpoorAutoCapture
import SpoorModel
import SpoorTracker
import Testing

/// What a click is and what it says: fake view trees in the shapes UIKit builds, checked property by property.
@Suite("click rules")
struct ClickRulesTests {
    let home = FakePage(Chain.page("MyApp.HomeViewController"), parent: Chain.navigation, navigationItemTitle: "Home")

    /// A page root view holding a header label and a stack view with three buttons.
    private func buttonsPage() -> (root: FakeView, buttons: [FakeView]) {
        let root = FakeView("UIView")
        root.page = home
        root.add(FakeView("UILabel", text: "Header"))
        let stack = root.add(FakeView("UIStackView"))
        let buttons = (0..<3).map { stack.add(FakeView("UIButton", id: "b\($0)", text: " Button \($0) ")) }
        return (root, buttons)
    }

    @Test func buttonInAStackView() throws {
        let click = try #require(CaptureRules.click(on: buttonsPage().buttons[2]))
        #expect(click.elementType == "UIButton")
        #expect(click.elementContent == "Button 2")
        #expect(click.elementID == "b2")
        #expect(click.elementPath == "UIView/UIStackView[0]/UIButton[2]")
        #expect(click.elementPosition == nil)
        #expect(click.page?.screenName == "MyApp.HomeViewController")
        #expect(click.page?.title == "Home")
    }

    @Test func elementIDSetForAnalyticsWinsOverTheAccessibilityIdentifier() throws {
        let button = buttonsPage().buttons[0]
        button.elementID = "checkout-save"
        #expect(try #require(CaptureRules.click(on: button)).elementID == "checkout-save")
        button.elementID = "  "
        #expect(try #require(CaptureRules.click(on: button)).elementID == "b0")
    }

    @Test func nestedControllersTheChildIsLookedThroughToItsParentsPage() throws {
        // A child controller (not a page) inside the home page: its button's page is home, and the path
        // starts at home's root view.
        let (root, _) = buttonsPage()
        let banner = root.add(FakeView("UIView"))
        banner.page = FakePage(Chain.page("MyApp.BannerViewController"), parent: home.typeNames)
        let close = banner.add(FakeView("UIButton", text: "Close"))
        let click = try #require(CaptureRules.click(on: close))
        #expect(click.page?.screenName == "MyApp.HomeViewController")
        #expect(click.elementPath == "UIView/UIView[0]/UIButton[0]")
        // With child pages, the child is the page and the path's root.
        let childClick = try #require(CaptureRules.click(on: close, childPages: true))
        #expect(childClick.page?.screenName == "MyApp.BannerViewController")
        #expect(childClick.elementPath == "UIView/UIButton[0]")
    }

    @Test func aViewInAHostingControllerBelongsToThePageAroundIt() throws {
        let (root, _) = buttonsPage()
        let hosted = root.add(FakeView("UIView"))
        hosted.page = FakePage(Chain.hosting, parent: home.typeNames)
        let map = hosted.add(FakeView("MyApp.MapView"))
        #expect(try #require(CaptureRules.click(on: map)).page?.screenName == "MyApp.HomeViewController")
    }

    @Test func barButtonTapIsOneUIBarButtonItemClickOnThePageShown() throws {
        // UILayoutContainerView (the navigation controller's view) / UINavigationBar / content view / button.
        let container = FakeView("UILayoutContainerView")
        container.page = FakePage(Chain.navigation, shownChild: home)
        let bar = container.add(FakeView("UINavigationBar"))
        let content = bar.add(FakeView("_UINavigationBarContentView"))
        content.add(FakeView("_UIButtonBarButton", text: nil))  // the back button
        let share = content.add(FakeView("_UIButtonBarButton", id: "share"))
        share.add(FakeView("_UIModernBarButton", text: "Share"))
        let click = try #require(CaptureRules.click(on: share))
        #expect(click.elementType == "UIBarButtonItem")
        #expect(click.elementContent == "Share")
        #expect(click.elementID == "share")
        #expect(click.elementPath == "UILayoutContainerView/UINavigationBar[0]/_UINavigationBarContentView[0]/_UIButtonBarButton[1]")
        #expect(click.page?.screenName == "MyApp.HomeViewController")
        // The item itself reaches sendAction next, for the same tap: never a click.
        #expect(!CaptureRules.isClick(sender: .barItem, event: .touchEnded))
        #expect(!CaptureRules.isClick(sender: .barItem, event: .noEvent))
    }

    @Test func tabBarItemsCarryTheirIndexAndShareAPath() throws {
        let container = FakeView("UILayoutContainerView")
        let tabs = FakePage(Chain.tabs, shownChild: FakePage(Chain.page("MyApp.FeedViewController"), parent: Chain.tabs))
        container.page = tabs
        let bar = container.add(FakeView("UITabBar"))
        bar.add(FakeView("_UIBarBackground"))
        let buttons = (0..<3).map { bar.add(FakeView("UITabBarButton", text: ["Feed", "Search", "Me"][$0])) }
        let click = try #require(CaptureRules.click(on: buttons[2]))
        #expect(click.elementType == "UITabBarItem")
        #expect(click.elementPosition == "2")
        #expect(click.elementContent == "Me")
        #expect(click.elementPath == "UILayoutContainerView/UITabBar[0]/UITabBarButton[-]")
        #expect(click.page?.screenName == "MyApp.FeedViewController")
    }

    @Test func valueControlsGiveTheirValue() throws {
        let (root, _) = buttonsPage()
        let segments = root.add(FakeView("UISegmentedControl", kind: .segmented(selected: 1, titles: ["Day", "Week"])))
        let imageSegments = root.add(FakeView("UISegmentedControl", kind: .segmented(selected: 0, titles: [nil])))
        let noSegment = root.add(FakeView("UISegmentedControl", kind: .segmented(selected: -1, titles: ["Day"])))
        let slider = root.add(FakeView("UISlider", kind: .slider(value: 0.25, isTracking: false)))
        let stepper = root.add(FakeView("UIStepper", kind: .stepper(value: 3)))
        let halfStepper = root.add(FakeView("UIStepper", kind: .stepper(value: 0.5)))
        let toggle = root.add(FakeView("UISwitch", kind: .toggle(isOn: false), id: "wifi"))
        let dots = root.add(FakeView("UIPageControl", kind: .pageControl(current: 4)))

        let segmentClick = try #require(CaptureRules.click(on: segments))
        #expect([segmentClick.elementContent, segmentClick.elementPosition] == ["Week", "1"])
        #expect(segmentClick.elementPath == "UIView/UISegmentedControl[0]")
        #expect(try #require(CaptureRules.click(on: imageSegments)).elementContent == "")
        #expect(CaptureRules.click(on: noSegment) == nil)
        #expect(try #require(CaptureRules.click(on: slider)).elementContent == "0.250000")
        #expect(try #require(CaptureRules.click(on: stepper)).elementContent == "3")
        #expect(try #require(CaptureRules.click(on: halfStepper)).elementContent == "0.5")
        let switchClick = try #require(CaptureRules.click(on: toggle))
        #expect([switchClick.elementType, switchClick.elementContent, switchClick.elementID] == ["UISwitch", "unchecked", "wifi"])
        #expect(CaptureRules.elementContent(FakeView("UISwitch", kind: .toggle(isOn: true))) == "checked")
        #expect(try #require(CaptureRules.click(on: dots)).elementContent == "4")
    }

    @Test func whichActionsAreClicks() {
        // Any control: only a tap whose touch ended; `sendActions(for:)` from code (no event) is not a click.
        #expect(CaptureRules.isClick(sender: .view(.plain), event: .touchEnded))
        #expect(!CaptureRules.isClick(sender: .view(.plain), event: .otherEvent))
        #expect(!CaptureRules.isClick(sender: .view(.plain), event: .noEvent))
        // Value controls always count.
        for kind: ViewKind in [.toggle(isOn: true), .stepper(value: 1), .segmented(selected: 0, titles: []), .pageControl(current: 0)] {
            #expect(CaptureRules.isClick(sender: .view(kind), event: .noEvent))
            #expect(CaptureRules.isClick(sender: .view(kind), event: .otherEvent))
        }
        // A slider once the finger lifts.
        #expect(CaptureRules.isClick(sender: .view(.slider(value: 1, isTracking: false)), event: .touchEnded))
        #expect(!CaptureRules.isClick(sender: .view(.slider(value: 1, isTracking: true)), event: .touchEnded))
        #expect(!CaptureRules.isClick(sender: .view(.slider(value: 1, isTracking: false)), event: .noEvent))
        // Text entry, items and other senders never.
        #expect(!CaptureRules.isClick(sender: .view(.textInput), event: .touchEnded))
        #expect(!CaptureRules.isClick(sender: .barItem, event: .touchEnded))
        #expect(!CaptureRules.isClick(sender: .other, event: .touchEnded))
    }

    @Test func hiddenViewsGiveNoTextAndAreNeverClicked() throws {
        let (root, _) = buttonsPage()
        let card = root.add(FakeView("MyApp.CardView"))
        card.add(FakeView("UILabel", text: "Visible"))
        let hiddenLabel = card.add(FakeView("UILabel", text: "Secret"))
        hiddenLabel.isHidden = true
        let optedOutLabel = card.add(FakeView("UILabel", text: "Opted out"))
        optedOutLabel.ignoresAutoCapture = true
        card.add(FakeView("UITextField", kind: .textInput, text: "typed by the user"))
        #expect(try #require(CaptureRules.click(on: card)).elementContent == "Visible")
        #expect(CaptureRules.click(on: hiddenLabel) == nil)
        let hiddenPanel = root.add(FakeView("UIView"))
        hiddenPanel.isHidden = true
        let buttonInHiddenPanel = hiddenPanel.add(FakeView("UIButton", text: "Go"))
        #expect(CaptureRules.click(on: buttonInHiddenPanel) == nil)
        #expect(CaptureRules.click(on: FakeView("UITextField", kind: .textInput)) == nil)
    }

    /// A table in a feed page: section 2, row 5, a cell with a title, a hidden badge and a subtitle.
    private func feedCell() -> (table: FakeView, cell: FakeView) {
        let root = FakeView("UIView")
        root.page = FakePage(Chain.page("MyApp.FeedViewController"), parent: Chain.navigation, navigationItemTitle: "Feed")
        let table = root.add(FakeView("UITableView", id: "feed"))  // list and cell kinds come from class names
        table.customProperties = ["list": "feed", "shared": "list"]
        let cell = table.add(FakeView(["MyApp.ProductCell", "UITableViewCell", "UIView"], id: "row"))
        cell.indexPath = CellIndexPath(section: 2, item: 5)
        cell.customProperties = ["shared": "cell"]
        let content = cell.add(FakeView("UITableViewCellContentView"))
        content.add(FakeView("UILabel", text: "Tea"))
        let badge = content.add(FakeView("UILabel", text: "NEW"))
        badge.isHidden = true
        content.add(FakeView("UILabel", text: "3.50"))
        return (table, cell)
    }

    @Test func cellInSection2IsTypedAsItsListWithSectionAndRow() throws {
        let (_, cell) = feedCell()
        let click = try #require(CaptureRules.cellClick(on: cell, delegateProperties: ["row_kind": "product"]))
        #expect(click.elementType == "UITableView")
        #expect(click.elementID == "feed")
        #expect(click.elementContent == "Tea-3.50")
        #expect(click.elementPosition == "2:5")
        #expect(click.elementPath == "UIView/UITableView[0]/MyApp.ProductCell[2][-]")
        #expect(click.page?.screenName == "MyApp.FeedViewController")
        #expect(click.customProperties == ["list": "feed", "shared": "cell", "row_kind": "product"])
    }

    @Test func aTapInsideACellCarriesTheCellsPosition() throws {
        let (_, cell) = feedCell()
        let label = cell.children[0].children[0]
        let click = try #require(CaptureRules.click(on: label))
        #expect(click.elementType == "UILabel")
        #expect(click.elementPosition == "2:5")
        #expect(click.elementPath == "UIView/UITableView[0]/MyApp.ProductCell[2][-]/UITableViewCellContentView[0]/UILabel[0]")
    }

    @Test func optOutsCoverEverythingInside() {
        let (root, buttons) = buttonsPage()
        buttons[0].parent?.ignoresAutoCapture = true
        #expect(CaptureRules.click(on: buttons[1]) == nil)
        #expect(CaptureRules.click(on: root) != nil)
        // A controller that opts out: nothing inside it is clicked, even through a child controller.
        let pinRoot = FakeView("UIView")
        pinRoot.page = FakePage(Chain.page("MyApp.PinViewController"), ignoresAutoCapture: true)
        let pad = pinRoot.add(FakeView("UIView"))
        pad.page = FakePage(Chain.page("MyApp.KeypadViewController"), parent: Chain.page("MyApp.PinViewController"))
        #expect(CaptureRules.click(on: pad.add(FakeView("UIButton", text: "1"))) == nil)
        let (table, cell) = feedCell()
        table.ignoresAutoCapture = true
        #expect(CaptureRules.cellClick(on: cell) == nil)
    }

    @Test func ignoringATypeIgnoresItsSubclasses() {
        let (root, _) = buttonsPage()
        let fancy = root.add(FakeView(["MyApp.FancySwitch", "UISwitch", "UIControl", "UIView"], kind: .toggle(isOn: true)))
        let ignore = AutoTrackIgnoreList(elementTypes: ["UISwitch"])
        #expect(CaptureRules.click(on: fancy, ignore: ignore) == nil)
        #expect(CaptureRules.click(on: fancy) != nil)
        #expect(CaptureRules.click(on: root.add(FakeView("UIButton")), ignore: ignore) != nil)
        let (_, cell) = feedCell()
        #expect(CaptureRules.cellClick(on: cell, ignore: AutoTrackIgnoreList(elementTypes: ["UIScrollView"])) == nil)
    }

    @Test func kindsComeFromTheGlueElseFromClassNames() {
        #expect(CaptureRules.kind(of: FakeView("UISwitch", kind: .toggle(isOn: true))) == .toggle(isOn: true))
        #expect(CaptureRules.kind(of: FakeView(["MyApp.NoteField", "UITextField", "UIControl", "UIView"])) == .textInput)
        #expect(CaptureRules.kind(of: FakeView("UISearchBar")) == .textInput)
        #expect(CaptureRules.kind(of: FakeView(["MyApp.Grid", "UICollectionView", "UIScrollView", "UIView"])) == .list)
        #expect(CaptureRules.kind(of: FakeView(["MyApp.Tile", "UICollectionViewCell", "UIView"])) == .cell)
        #expect(CaptureRules.kind(of: FakeView("UIButton")) == .plain)
        #expect(CaptureRules.click(on: FakeView(["MyApp.NoteField", "UITextField", "UIControl", "UIView"])) == nil)
    }

    @Test func observedClassesKeepTheirName() {
        #expect(CaptureRules.className("NSKVONotifying_MyApp.CartButton") == "MyApp.CartButton")
        #expect(CaptureRules.className("UIButton") == "UIButton")
        #expect(CaptureRules.className("NSKVONotifying_") == "")
    }

    @Test func whichGesturesAreClicks() {
        #expect(CaptureRules.isClickRecognizer(["UITapGestureRecognizer", "UIGestureRecognizer"]))
        #expect(CaptureRules.isClickRecognizer(["UILongPressGestureRecognizer", "UIGestureRecognizer"]))
        // Only the classes themselves, as isMemberOfClass: an app's subclass is a gesture of its own.
        #expect(!CaptureRules.isClickRecognizer(["MyApp.DoubleTap", "UITapGestureRecognizer", "UIGestureRecognizer"]))
        #expect(!CaptureRules.isClickRecognizer(["UITextTapRecognizer", "UITapGestureRecognizer", "UIGestureRecognizer"]))
        #expect(!CaptureRules.isClickRecognizer(["_UIContextMenuGesture", "UILongPressGestureRecognizer"]))
        #expect(!CaptureRules.isClickRecognizer(["UIPanGestureRecognizer", "UIGestureRecognizer"]))
        #expect(!CaptureRules.isClickRecognizer([]))
        #expect(CaptureRules.isAppAction("didTapAvatar:"))
        #expect(!CaptureRules.isAppAction("_longPressGestureRecognized:"))
        #expect(!CaptureRules.isAppAction(""))
        #expect(CaptureRules.acceptsGestureClicks(FakeView("UILabel")))
        #expect(!CaptureRules.acceptsGestureClicks(FakeView("UITextView", kind: .textInput)))
        #expect(!CaptureRules.acceptsGestureClicks(FakeView("UISearchBar", kind: .textInput)))
        #expect(!CaptureRules.acceptsGestureClicks(FakeView(["MyApp.Browser", "WKWebView", "UIView"])))
        #expect(!CaptureRules.acceptsGestureClicks(FakeView("WKContentView")))
    }
}
