import SpoorAutoCapture
import SpoorTracker
import Testing

/// Fake trees in the shapes UIKit builds, checked property by property.
@Suite("capture rules on UIKit-shaped trees")
struct CaptureRulesTests {
    let home = FakePage(typeName: "HomeViewController", navigationTitle: "Home")

    /// A page root view holding a stack view with three buttons.
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
        #expect(click.page == PageInfo(screenName: "HomeViewController", title: "Home"))
    }

    @Test func navigationBarBackButtonNamesTheShownPage() throws {
        // UINavigationBar/_UIButtonBarButton: the glue reports the page being shown, not the navigation controller.
        let bar = FakeView("UINavigationBar")
        bar.page = FakePage(typeName: "DetailViewController", navigationTitle: "Detail")
        let back = bar.add(FakeView("UINavigationBackButton", text: "Home"))
        let click = try #require(CaptureRules.click(on: back))
        #expect(click.elementType == "UINavigationBackButton")
        #expect(click.elementContent == "Home")
        #expect(click.elementID == "")
        #expect(click.elementPath == "UINavigationBar/UINavigationBackButton[0]")
        #expect(click.page?.screenName == "DetailViewController")
        #expect(click.page?.title == "Detail")
    }

    @Test func tableCellInsideACollectionViewCell() throws {
        let root = FakeView("UIView")
        root.page = FakePage(typeName: "FeedViewController", titleViewText: "Feed")
        let collection = root.add(FakeView("UICollectionView"))
        let outer = collection.add(FakeView("FeedCell"))
        outer.indexPath = CellIndexPath(section: 1, item: 4)
        let table = outer.add(FakeView("UITableView"))
        let cell = table.add(FakeView("UITableViewCell", id: "row"))
        cell.indexPath = CellIndexPath(section: 0, item: 7)
        let content = cell.add(FakeView("UIView"))
        content.add(FakeView("UILabel", text: "Alice"))
        content.add(FakeView("UILabel", text: "online"))
        let click = try #require(CaptureRules.click(on: cell))
        #expect(click.elementType == "UITableViewCell")
        #expect(click.elementContent == "Alice-online")
        #expect(click.elementID == "row")
        #expect(click.elementPosition == "0:7")
        #expect(click.elementPath == "UIView/UICollectionView[0]/FeedCell[-]/UITableView[0]/UITableViewCell[-]")
        #expect(click.page == PageInfo(screenName: "FeedViewController", title: "Feed"))
    }

    @Test func gestureOnALabelInsideACell() throws {
        let table = FakeView("UITableView")
        let cell = table.add(FakeView("UITableViewCell"))
        cell.indexPath = CellIndexPath(section: 2, item: 0)
        let label = cell.add(FakeView("UILabel", id: "more", text: "More…"))
        let click = try #require(CaptureRules.click(on: label))
        #expect(click.elementType == "UILabel")
        #expect(click.elementContent == "More…")
        #expect(click.elementID == "more")
        #expect(click.elementPosition == "2:0")
        #expect(click.elementPath == "UITableView/UITableViewCell[-]/UILabel[0]")
        #expect(click.page == nil)  // no owning page known: the tracker uses the current page
    }

    @Test func alertActionCarriesTheAlertsPresenter() throws {
        let alert = FakeView("UIAlertController", text: "Delete photo?")
        alert.page = home
        let action = alert.add(FakeView("UIAlertAction", text: "Delete"))
        let click = try #require(CaptureRules.click(on: action))
        #expect(click.elementType == "UIAlertAction")
        #expect(click.elementContent == "Delete")
        #expect(click.elementPath == "UIAlertController/UIAlertAction[0]")
        #expect(click.page?.screenName == "HomeViewController")
    }

    @Test func barButtonItemSegmentedControlAndSwitch() throws {
        let (root, _) = buttonsPage()
        let toolbar = root.add(FakeView("UIToolbar"))
        let item = toolbar.add(FakeView("UIBarButtonItem", id: "share", text: "Share"))
        let segments = root.add(FakeView("UISegmentedControl", text: CaptureRules.segmentText(titles: ["Day", nil], selected: 1)))
        let toggle = root.add(FakeView("UISwitch", id: "wifi", text: CaptureRules.switchText(isOn: false)))

        let itemClick = try #require(CaptureRules.click(on: item))
        #expect([itemClick.elementType, itemClick.elementContent, itemClick.elementID] == ["UIBarButtonItem", "Share", "share"])
        #expect(itemClick.elementPath == "UIView/UIToolbar[0]/UIBarButtonItem[0]")

        let segmentClick = try #require(CaptureRules.click(on: segments))
        #expect(segmentClick.elementContent == "1")
        #expect(CaptureRules.segmentText(titles: ["Day", "Week"], selected: 0) == "Day")
        #expect(CaptureRules.segmentText(titles: ["Day"], selected: 3) == nil)

        let switchClick = try #require(CaptureRules.click(on: toggle))
        #expect([switchClick.elementType, switchClick.elementContent, switchClick.elementID] == ["UISwitch", "unchecked", "wifi"])
        #expect(switchClick.elementPath == "UIView/UISwitch[0]")
        #expect(CaptureRules.switchText(isOn: true) == "checked")
    }

    @Test func viewOptOutCoversEverythingInside() {
        let (root, buttons) = buttonsPage()
        buttons[0].parent?.ignoresAutoCapture = true
        #expect(CaptureRules.click(on: buttons[1]) == nil)
        #expect(CaptureRules.click(on: root) != nil)
    }

    @Test func pageNameAndTitleRules() {
        #expect(CaptureRules.pageInfo(FakePage(typeName: "A", navigationTitle: " ", titleViewText: "Logo")) == PageInfo(screenName: "A", title: "Logo"))
        #expect(CaptureRules.pageInfo(FakePage(typeName: "A")) == PageInfo(screenName: "A", title: ""))
        let custom = FakePage(typeName: "ProductViewController", navigationTitle: "Nav", customPage: ProductPage())
        #expect(CaptureRules.pageInfo(custom) == PageInfo(screenName: "ProductViewController", title: "Product 42", url: "app://product/42"))
        let renamed = FakePage(typeName: "X", customPage: CustomPage(screenName: "Checkout"))
        #expect(CaptureRules.pageInfo(renamed)?.screenName == "Checkout")
        // Containers and system controllers are never pages; a container that describes itself is.
        #expect(CaptureRules.pageInfo(FakePage(typeName: "UINavigationController")) == nil)
        #expect(CaptureRules.pageInfo(FakePage(typeName: "UIAlertController")) == nil)
        #expect(CaptureRules.pageInfo(FakePage(typeName: "UIHostingController", customPage: CustomPage(title: "S"))) != nil)
        // A controller that opts out is handed to the tracker marked, so its ignore rules decide.
        #expect(CaptureRules.pageInfo(FakePage(typeName: "Pin", ignoresAutoCapture: true))?.ignoresAutoTrack == true)
    }
}
