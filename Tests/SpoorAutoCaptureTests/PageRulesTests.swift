import SpoorAutoCapture
import SpoorModel
import SpoorTracker
import Testing

/// Which controllers are pages, and what their pages say: fake controller trees in the shapes UIKit builds.
@Suite("page rules")
struct PageRulesTests {
    @Test func onlyTopLevelControllersArePagesUnlessChildPagesAreAsked() {
        let home = Chain.page("MyApp.HomeViewController")
        let root = FakePage(home)
        let inNavigation = FakePage(home, parent: Chain.navigation)
        let inTabs = FakePage(home, parent: Chain.tabs)
        let inPages = FakePage(home, parent: ["UIPageViewController"] + Chain.controller)
        let inSplit = FakePage(home, parent: ["UISplitViewController"] + Chain.controller)
        let inSubclassedNavigation = FakePage(home, parent: ["MyApp.MainNavigation"] + Chain.navigation)
        let child = FakePage(Chain.page("MyApp.BannerViewController"), parent: home)
        for page in [root, inNavigation, inTabs, inPages, inSplit, inSubclassedNavigation] {
            #expect(CaptureRules.isPage(page, childPages: false))
        }
        #expect(!CaptureRules.isPage(child, childPages: false))
        #expect(CaptureRules.isPage(child, childPages: true))
    }

    @Test func containersSystemAndHostingControllersAreSkippedByKindNotName() {
        let skipped: [[String]] = [
            Chain.navigation,
            ["MyApp.MainNavigation"] + Chain.navigation,  // a subclass, by any name
            ["MyApp.Tabs"] + Chain.tabs,
            ["UISplitViewController"] + Chain.controller,
            ["UIPageViewController"] + Chain.controller,
            ["MyApp.ConfirmAlert", "UIAlertController"] + Chain.controller,
            ["MyApp.Keyboard", "UIInputViewController"] + Chain.controller,
            Chain.hosting,  // generic, as NSStringFromClass gives it (mangled)
            ["SwiftUI.UIHostingController<MyApp.RootView>"] + Chain.controller,  // generic, demangled
            ["MyApp.SettingsHost"] + Chain.hosting,  // a subclass of a generic hosting controller
        ]
        for chain in skipped {
            #expect(!CaptureRules.isPage(FakePage(chain), childPages: true), "\(chain[0])")
        }
        // Containers and children: child pages never make a container a page.
        #expect(!CaptureRules.isPage(FakePage(Chain.navigation, parent: Chain.tabs), childPages: true))
        // A controller that describes its page is one, whatever its kind.
        #expect(CaptureRules.isPage(FakePage(Chain.hosting, customPage: CustomPage(title: "S")), childPages: false))
    }

    @Test func screenNameKeepsTheModuleAndURLDefaultsToIt() {
        let cart = FakePage(Chain.page("MyApp.CartViewController"), navigationItemTitle: "Cart")
        let info = CaptureRules.pageInfo(cart)
        #expect(info.screenName == "MyApp.CartViewController")
        #expect(info.url == "MyApp.CartViewController")
        #expect(info.title == "Cart")
        let product = CaptureRules.pageInfo(FakePage(Chain.page("MyApp.ProductViewController"), customPage: ProductPage()))
        #expect(product.screenName == "MyApp.ProductViewController")
        #expect(product.title == "Product 42")
        #expect(product.url == "app://product/42")
        #expect(product.customProperties == ["product_id": "42"])
        let renamed = CaptureRules.pageInfo(FakePage(Chain.page("X"), customPage: CustomPage(screenName: " Checkout ")))
        #expect(renamed.screenName == "Checkout")
        #expect(renamed.url == "Checkout")
    }

    @Test func titleIsTheTitleViewThenTheNavigationItemThenTheControllerTitle() {
        let logo = FakeView(Chain.view("MyApp.LogoView"))
        logo.add(FakeView(Chain.view("UIImageView")))
        logo.add(FakeView(Chain.view("UILabel"), text: " Shop "))
        let titled = FakePage(Chain.page("A"), titleView: logo, navigationItemTitle: "Nav", title: "Controller")
        #expect(CaptureRules.title(titled) == "Shop")

        let hiddenLogo = FakeView(Chain.view("UILabel"), text: "Hidden")
        hiddenLogo.isHidden = true
        #expect(CaptureRules.title(FakePage(Chain.page("A"), titleView: hiddenLogo, navigationItemTitle: "Nav")) == "Nav")
        #expect(CaptureRules.title(FakePage(Chain.page("A"), titleView: FakeView(Chain.view("UIImageView")), navigationItemTitle: "Nav")) == "Nav")
        #expect(CaptureRules.title(FakePage(Chain.page("A"), navigationItemTitle: "  ", title: "Controller")) == "Controller")
        #expect(CaptureRules.title(FakePage(Chain.page("A"))) == "")
        #expect(CaptureRules.title(FakePage(Chain.page("A"), titleView: logo, customPage: ProductPage())) == "Product 42")
    }

    @Test func optingOutMarksThePageForTheTrackerAndIgnoreListsMatchScreenNames() {
        let pin = CaptureRules.pageInfo(FakePage(Chain.page("MyApp.PinViewController"), ignoresAutoCapture: true))
        #expect(pin.ignoresAutoTrack)
        #expect(CaptureRules.isIgnored(pin, by: AutoTrackIgnoreList()))
        let splash = CaptureRules.pageInfo(FakePage(Chain.page("MyApp.Splash")))
        #expect(!CaptureRules.isIgnored(splash, by: AutoTrackIgnoreList()))
        #expect(CaptureRules.isIgnored(splash, by: AutoTrackIgnoreList(screenNames: ["MyApp.Splash"])))
    }

    @Test func hooksAreInstalledOnlyForWhatAutoCaptureAsks() {
        #expect(UIKitHook.needed(for: []).isEmpty)
        #expect(UIKitHook.needed(for: .pages) == [.pages])
        #expect(UIKitHook.needed(for: .childPages) == [.pages])
        #expect(UIKitHook.needed(for: .clicks) == [.actions, .cellSelection, .gestures])
        #expect(UIKitHook.needed(for: [.pages, .clicks]) == [.pages, .actions, .cellSelection, .gestures])
    }
}
