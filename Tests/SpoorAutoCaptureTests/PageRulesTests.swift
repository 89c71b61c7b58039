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
        let product = CaptureRules.pageInfo(FakePage(Chain.page("MyApp.ProductViewController"), customPage: productPage))
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
        #expect(CaptureRules.title(FakePage(Chain.page("A"), titleView: logo, customPage: productPage)) == "Product 42")
    }

    @Test func optingOutMarksThePageForTheTrackerAndIgnoreListsMatchScreenNames() {
        let pin = CaptureRules.pageInfo(FakePage(Chain.page("MyApp.PinViewController"), ignoresAutoCapture: true))
        #expect(pin.ignoresAutoTrack)
        #expect(CaptureRules.isIgnored(pin, by: AutoTrackIgnoreList()))
        let splash = CaptureRules.pageInfo(FakePage(Chain.page("MyApp.Splash")))
        #expect(!CaptureRules.isIgnored(splash, by: AutoTrackIgnoreList()))
        #expect(CaptureRules.isIgnored(splash, by: AutoTrackIgnoreList(screenNames: ["MyApp.Splash"])))
    }

    @Test func hooksAreInstalledOnlyForWhatAutoCaptureAsksAndAutoTrackKeeps() {
        let all: AutoTrackOptions = .all
        #expect(UIKitHook.needed(for: [], keeping: all).isEmpty)
        #expect(UIKitHook.needed(for: .pages, keeping: all) == [.pages])
        #expect(UIKitHook.needed(for: .childPages, keeping: all) == [.pages])
        #expect(UIKitHook.needed(for: .clicks, keeping: all) == [.actions, .cellSelection, .gestures])
        #expect(UIKitHook.needed(for: [.pages, .clicks], keeping: all) == [.pages, .actions, .cellSelection, .gestures])
        // autoTrack drops what a hook captures: the hook is not installed.
        #expect(UIKitHook.needed(for: [.pages, .clicks], keeping: []).isEmpty)
        #expect(UIKitHook.needed(for: [.pages, .clicks], keeping: [.appStart, .appEnd, .appCrashed]).isEmpty)
        #expect(UIKitHook.needed(for: [.pages, .clicks], keeping: .appViewScreen) == [.pages])
        #expect(UIKitHook.needed(for: [.pages, .clicks], keeping: .appPageLeave) == [.pages])
        // Clicks without a page of their own name the visible page: pages stay with $AppClick alone.
        #expect(UIKitHook.needed(for: [.pages, .clicks], keeping: .appClick) == [.pages, .actions, .cellSelection, .gestures])
        #expect(UIKitHook.needed(for: .clicks, keeping: [.appViewScreen, .appPageLeave]).isEmpty)
    }

    @Test func systemControllersAreNotPagesAsLongAsTheSensorsList() {
        // A sample of each family the Sensors SDK skips: Safari, the player, pickers, compose and share
        // sheets, context menus, the input assistant, remote view controllers.
        let system = [
            "SFSafariViewController", "AVPlayerViewController", "UIImagePickerController", "UIDocumentPickerViewController",
            "UIDocumentBrowserViewController", "SLComposeViewController", "UIActivityViewController",
            "_UIContextMenuActionsOnlyViewController", "UISystemInputAssistantViewController", "_UIRemoteViewController",
            "_UIRemoteInputViewController", "UIReferenceLibraryViewController", "CKSMSComposeRemoteViewController",
        ]
        for name in system {
            #expect(!CaptureRules.isPage(FakePage(Chain.page(name)), childPages: true), "\(name)")
        }
        // An app's subclass of a public one is skipped too.
        #expect(!CaptureRules.isPage(FakePage(["MyApp.Browser", "SFSafariViewController"] + Chain.controller), childPages: false))
        #expect(CaptureRules.systemTypes.count >= 70)
    }
}
