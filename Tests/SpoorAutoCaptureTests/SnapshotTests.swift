import SpoorModel
import SpoorTracker
import Testing

import SpoorAutoCapture

/// What a snapshot of live views and controllers reads, and what it holds: the decisions the glue leaves to
/// ``ViewSnapshots`` and ``PageSnapshots``, on fakes that count their reads.
@Suite("snapshots")
@MainActor
struct SnapshotTests {
    /// A window's root view on a home page, with a stack of buttons and a big sibling container.
    func screen() -> (root: LiveView, stack: LiveView, big: LiveView) {
        let root = LiveView("UIView")
        root.page = FakePage(Chain.page("MyApp.HomeViewController"), parent: Chain.navigation).node()
        let big = root.add(LiveView("UIView"))
        for index in 0..<500 { big.add(LiveView("UILabel", text: "row \(index)")) }
        let stack = root.add(LiveView("UIStackView"))
        return (root, stack, big)
    }

    @Test func aTitledButtonIsReadWithoutItsSubviewsNorItsSiblingsContent() {
        let (root, stack, big) = screen()
        stack.add(LiveView("UIButton", text: "Back"))
        stack.add(LiveView("UILabel", text: "or"))
        stack.add(LiveView("UIButton", text: "Next"))
        let save = stack.add(LiveView("UIButton", id: "save", text: "Save"))
        for _ in 0..<100 { save.add(LiveView("UIImageView")) }
        let node = ViewSnapshots.node(of: save, reader: LiveView.reader)
        #expect(save.subviewReads == 0 && save.readsBelow == 0)
        #expect(big.subviewReads == 0 && big.readsBelow == 0)
        #expect(CaptureRules.elementContent(node) == "Save")
        // Its index among same-type siblings, and the page of the root view.
        #expect(CaptureRules.elementPath(node) == "UIView/UIStackView[0]/UIButton[2]")
        #expect(CaptureRules.page(of: node).map(CaptureRules.screenName) == "MyApp.HomeViewController")
        withExtendedLifetime(root) {}  // superviews are held weakly, as UIKit's
    }

    @Test func contentFromSubviewsReadsAtMostTheBudgetAndSkipsHiddenAndOptedOutSubtrees() {
        let (root, _, big) = screen()
        let card = root.add(LiveView("MyApp.CardView"))
        let hidden = card.add(LiveView("UIView"))
        hidden.isHidden = true
        for _ in 0..<10 { hidden.add(LiveView("UILabel", text: "secret")) }
        let optedOut = card.add(LiveView("UILabel", text: "private"))
        optedOut.ignored = true
        card.add(LiveView("UILabel", text: "Tea"))
        card.add(LiveView("UILabel", text: "12.50"))
        let cardNode = ViewSnapshots.node(of: card, reader: LiveView.reader)
        #expect(CaptureRules.elementContent(cardNode) == "Tea-12.50")
        #expect(hidden.subviewReads == 0 && hidden.readsBelow == 0)
        // A tap on a huge container reads no more than the budget.
        _ = ViewSnapshots.node(of: big, reader: LiveView.reader)
        #expect(big.readsBelow == CaptureRules.contentViewBudget)
    }

    @Test func aCellsIndexPathComesFromTheNearestListAboveItNotOnlyItsSuperview() {
        let (root, _, _) = screen()
        let table = root.add(LiveView("UITableView", id: "orders"))
        let wrapper = table.add(LiveView("UITableViewWrapperView"))
        let cell = wrapper.add(LiveView("MyApp.OrderCell"))
        let cellChain = ["MyApp.OrderCell", "UITableViewCell", "UIView", "UIResponder", "NSObject"]
        cell.cell = (table, CellIndexPath(section: 2, item: 4))
        cell.add(LiveView("UILabel", text: "Order 4"))
        // The fake's chain for a custom cell: the cell class, then UIKit's.
        let reader = ViewReader<LiveView>(
            superview: LiveView.reader.superview, subviews: LiveView.reader.subviews,
            typeNames: { $0.typeNames.first == "MyApp.OrderCell" ? cellChain : $0.typeNames },
            fields: LiveView.reader.fields, indexPath: LiveView.reader.indexPath, page: LiveView.reader.page)
        let node = ViewSnapshots.node(of: cell, reader: reader)
        let click = CaptureRules.cellClick(on: node)
        #expect(click?.elementPosition == "2:4")
        #expect(click?.elementType == "UITableView")
        #expect(click?.elementID == "orders")
        #expect(click?.elementContent == "Order 4")
        #expect(click?.elementPath == "UIView/UITableView[0]/UITableViewWrapperView[0]/MyApp.OrderCell[2][-]")
        withExtendedLifetime(root) {}
    }

    @Test func aControllerOutsideANavigationControllerHasItsNavigationItemLeftAlone() {
        let tabs = LiveController(Chain.tabs)
        let home = tabs.show(LiveController(Chain.page("MyApp.HomeViewController"), title: "Home", itemTitle: "Nav"))
        let page = PageSnapshots.node(of: home, reader: LiveController.reader)
        #expect(home.navigationItemReads == 0)
        #expect(CaptureRules.title(page) == "Home")
        let root = LiveController(Chain.page("MyApp.RootViewController"), title: "Root")
        _ = PageSnapshots.node(of: root, reader: LiveController.reader)
        #expect(root.navigationItemReads == 0)
        // In a navigation controller (or a subclass of one), its item is shown, so it exists: it is read.
        let navigation = LiveController(["MyApp.MainNavigation"] + Chain.navigation)
        let detail = navigation.show(LiveController(Chain.page("MyApp.DetailViewController"), title: "Detail", itemTitle: "Nav"))
        #expect(CaptureRules.title(PageSnapshots.node(of: detail, reader: LiveController.reader)) == "Nav")
        #expect(detail.navigationItemReads == 1)
    }

    @Test func aContainerShowsTheChildItsKindSaysFollowedDown() throws {
        let tabs = LiveController(["MyApp.Tabs"] + Chain.tabs)
        let navigation = tabs.show(LiveController(Chain.navigation))
        navigation.show(LiveController(Chain.page("MyApp.HomeViewController")))
        let node = PageSnapshots.node(of: tabs, reader: LiveController.reader)
        let shown = try #require(CaptureRules.shownPage(node, childPages: false))
        #expect(CaptureRules.screenName(shown) == "MyApp.HomeViewController")
        // A container that shows itself is followed a bounded number of times.
        let loop = LiveController(Chain.navigation)
        loop.shown = loop
        var depth = 0
        var current: PageNode? = PageSnapshots.node(of: loop, reader: LiveController.reader)
        while let page = current { depth += 1; current = page.shownChildNode }
        #expect(depth == 9)
        loop.shown = nil
    }

    @Test func aSpoorPageControllerWithMainActorStateDescribesItsPage() {
        // SpoorPage is main-actor isolated: a controller's main-actor state satisfies it without
        // `nonisolated` (this would not compile otherwise), and CustomPage copies it on the main actor.
        @MainActor final class CheckoutController: SpoorPage {
            var heading = "Pay"
            var spoorTitle: String? { heading }
            var spoorProperties: Properties { ["step": "pay"] }
        }
        let controller = LiveController(Chain.page("MyApp.CheckoutViewController"))
        controller.custom = CustomPage(CheckoutController())
        let info = CaptureRules.pageInfo(PageSnapshots.node(of: controller, reader: LiveController.reader))
        #expect(info.title == "Pay")
        #expect(info.screenName == "MyApp.CheckoutViewController")
        #expect(info.customProperties == ["step": "pay"])
    }
}
