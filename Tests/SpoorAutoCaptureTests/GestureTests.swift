import SpoorAutoCapture
import SpoorModel
import SpoorTracker
import Testing

/// Gesture clicks: which recognizers are observed, from their targets, and when they fire a click.
@Suite("gesture clicks")
struct GestureTests {
    final class Recognizer {}
    final class Target {}

    let tap = ["UITapGestureRecognizer", "UIGestureRecognizer", "NSObject"]

    /// An avatar image view on a profile page.
    private func avatar() -> FakeView {
        let root = FakeView("UIView")
        root.page = FakePage(Chain.page("MyApp.ProfileViewController"), parent: Chain.navigation)
        return root.add(FakeView("UIImageView", id: "avatar"))
    }

    @Test func aTapWithAnAppTargetIsAClickWhenItEnds() async throws {
        let f = try Fixture()
        let recognizer = Recognizer(), target = Target()
        let view = avatar()
        #expect(f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: target, action: "showProfile:"))
        f.capture.gestureRecognized(recognizer, phase: .other, view: { view })  // began, changed
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { view })
        let clicks = await f.events()
        #expect(clicks.map { $0.string("$element_type") } == ["UIImageView"])
        #expect(clicks.first?.string("$element_id") == "avatar")
        #expect(clicks.first?.string("$screen_name") == "MyApp.ProfileViewController")
        withExtendedLifetime([target]) {}
    }

    @Test func recognizersWithoutAnAppTargetAreNotObserved() async throws {
        let f = try Fixture()
        let recognizer = Recognizer(), cellTable = Target(), app = Target()
        let view = avatar()
        // UIKit's own target on a public recognizer (a cell's long press), a pan, a nil target or action.
        #expect(!f.capture.gestureTargetAdded(to: recognizer, typeNames: ["UILongPressGestureRecognizer"], target: cellTable, action: "_longPressGestureRecognized:"))
        #expect(!f.capture.gestureTargetAdded(to: recognizer, typeNames: ["UIPanGestureRecognizer"], target: app, action: "drag:"))
        #expect(!f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: nil, action: "tap:"))
        #expect(!f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: app, action: nil))
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { view })
        #expect(await f.events().isEmpty)
        withExtendedLifetime([cellTable, app]) {}
    }

    @Test func aRemovedOrFreedTargetNoLongerCounts() async throws {
        let f = try Fixture()
        let removed = Recognizer(), emptied = Recognizer(), orphaned = Recognizer()
        let kept = Target(), other = Target()
        let view = avatar()
        f.capture.gestureTargetAdded(to: removed, typeNames: tap, target: kept, action: "open:")
        f.capture.gestureTargetRemoved(from: removed, target: kept, action: "open:")
        f.capture.gestureTargetAdded(to: emptied, typeNames: tap, target: kept, action: "open:")
        f.capture.gestureTargetAdded(to: emptied, typeNames: tap, target: other, action: "close:")
        f.capture.gestureTargetRemoved(from: emptied, target: nil, action: nil)  // removes every target
        weak var freed: Target?
        do {
            let doomed = Target()
            freed = doomed
            f.capture.gestureTargetAdded(to: orphaned, typeNames: tap, target: doomed, action: "open:")
        }
        #expect(freed == nil)
        for recognizer in [removed, emptied, orphaned] {
            f.capture.gestureRecognized(recognizer, phase: .ended, view: { view })
        }
        #expect(await f.events().isEmpty)
        withExtendedLifetime([kept, other]) {}
    }

    @Test func removingOneTargetKeepsTheOthers() async throws {
        let f = try Fixture()
        let recognizer = Recognizer(), first = Target(), second = Target()
        let view = avatar()
        f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: first, action: "open:")
        f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: second, action: "open:")
        f.capture.gestureTargetRemoved(from: recognizer, target: first, action: nil)
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { view })
        #expect(await f.events().count == 1)
        withExtendedLifetime([first, second]) {}
    }

    @Test func gesturesOnTextEntryAndWebContentAreNotClicks() async throws {
        let f = try Fixture()
        let recognizer = Recognizer(), target = Target()
        f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: target, action: "dismissKeyboard:")
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { FakeView("UITextView", kind: .textInput, text: "typed") })
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { FakeView(["MyApp.Browser", "WKWebView", "UIView"]) })
        #expect(await f.events().isEmpty)
        withExtendedLifetime(target) {}
    }

    /// A recognizer of another size than ``Recognizer``, so that it is not given the address of a freed one.
    final class LargerRecognizer {
        var padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    @Test func theTableDropsTheEntriesOfFreedRecognizers() {
        var table = GestureTargets()
        let target = Target(), live = Recognizer()
        table.add(target: target, action: "open:", to: live)
        var passing = (0..<100).map { _ in Recognizer() }
        for recognizer in passing { table.add(target: target, action: "open:", to: recognizer) }
        #expect(table.count == 101)
        passing = []
        // The table grows with new recognizers; once it has grown enough to prune, the hundred freed entries go
        // and only live ones are left.
        let later = (0..<200).map { _ in LargerRecognizer() }
        for recognizer in later { table.add(target: target, action: "open:", to: recognizer) }
        #expect(table.count == 1 + later.count, "entries of freed recognizers were kept")
        #expect(table.hasAppTarget(live))
        #expect(later.allSatisfy { table.hasAppTarget($0) })
        withExtendedLifetime((target, passing)) {}
    }

    @Test func manyRecognizersComeAndGo() async throws {
        // Entries of freed recognizers are dropped as the table grows; live ones keep working.
        let f = try Fixture()
        let target = Target()
        let live = Recognizer()
        f.capture.gestureTargetAdded(to: live, typeNames: tap, target: target, action: "open:")
        for _ in 0..<1_000 {
            let passing = Recognizer()
            f.capture.gestureTargetAdded(to: passing, typeNames: tap, target: target, action: "open:")
        }
        let view = avatar()
        f.capture.gestureRecognized(live, phase: .ended, view: { view })
        #expect(await f.events().count == 1)
        withExtendedLifetime(target) {}
    }

    @Test func aLongPressCancelledAfterItBeganIsAClickAsWhenItEnds() async throws {
        // Taken over by a scroll or the system after it was held long enough: the press completed.
        let f = try Fixture()
        let press = Recognizer(), target = Target()
        let view = avatar()
        #expect(f.capture.gestureTargetAdded(to: press, typeNames: ["UILongPressGestureRecognizer", "UIGestureRecognizer"], target: target, action: "menu:"))
        f.capture.gestureRecognized(press, phase: .other, view: { view })  // began
        f.capture.gestureRecognized(press, phase: .cancelled, view: { view })
        #expect(await f.events().map(\.name) == ["$AppClick"])
        withExtendedLifetime(target) {}
        #expect(CaptureRules.isGestureClick(.ended) && CaptureRules.isGestureClick(.cancelled) && !CaptureRules.isGestureClick(.other))
    }

    @Test func onlyTheTapAndLongPressClassesThemselvesAreObservedAsTheObjectReportsItsClass() throws {
        let f = try Fixture()
        let target = Target()
        // An app's subclass and UIKit's own are not tap recognizers here (isMemberOfClass).
        #expect(!f.capture.gestureTargetAdded(to: Recognizer(), typeNames: ["MyApp.DoubleTap"] + tap, target: target, action: "zoom:"))
        #expect(!f.capture.gestureTargetAdded(to: Recognizer(), typeNames: ["UITextTapRecognizer"] + tap, target: target, action: "select:"))
        // A recognizer observed by key-value observing runs as a subclass but reports the original class.
        let observed = CaptureRules.typeNames(isa: ["NSKVONotifying_UITapGestureRecognizer"] + tap, reported: "UITapGestureRecognizer")
        #expect(f.capture.gestureTargetAdded(to: Recognizer(), typeNames: observed, target: target, action: "open:"))
        withExtendedLifetime(target) {}
    }

    @Test func anAppTargetGetsTheObserverAheadOfItAndARemovedOneIsForgotten() async throws {
        // The hook bodies of addTarget(_:action:) and removeTarget(_:action:), on a recognizer whose targets
        // are kept in order as UIKit keeps them.
        let f = try Fixture()
        let recognizer = Recognizer(), app = Target(), observer = Target()
        var targets: [(AnyObject, String)] = []
        func add(_ target: AnyObject, _ action: String) {
            AutoCapture.addTargetHook(
                recognizer: recognizer, typeNames: tap, target: target, action: action, isObserver: target === observer,
                capture: f.capture, addObserver: { add(observer, "recognized:") }, original: { targets.append((target, action)) })
        }
        add(app, "open:")
        #expect(targets.map { $0.1 } == ["recognized:", "open:"])
        let view = avatar()
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { view })
        f.clock.advance(by: .seconds(1))
        AutoCapture.removeTargetHook(recognizer: recognizer, target: app, action: "open:", capture: f.capture) {
            targets.removeAll { $0.0 === app }
        }
        f.capture.gestureRecognized(recognizer, phase: .ended, view: { view })
        #expect(await f.events().count == 1)
        withExtendedLifetime([app, observer]) {}
    }

    @Test @MainActor func theObserversActionReadsThePhaseAndViewOnTheMainActor() async throws {
        let f = try Fixture()
        let recognizer = Recognizer(), target = Target()
        let view = avatar()
        f.capture.gestureTargetAdded(to: recognizer, typeNames: tap, target: target, action: "open:")
        let node = view.node()
        for phase in [GesturePhase.other, .ended] {
            let reader = GestureReader<Recognizer>(phase: { _ in phase }, view: { _ in node })
            AutoCapture.gestureHook(recognizer: recognizer, isMainThread: true, capture: f.capture, reader: reader)
        }
        #expect(await f.events().map { $0.string("$element_id") } == ["avatar"])
        withExtendedLifetime(target) {}
    }
}
