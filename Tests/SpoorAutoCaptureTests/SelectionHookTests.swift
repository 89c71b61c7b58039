import SpoorAutoCapture
import SpoorModel
import SpoorTracker
import Testing

/// The cell selection path end to end on a fake runtime: ``MethodHooks`` hooking delegate classes the way the
/// glue does on the Objective-C runtime, and ``AutoCapture/cellSelected(in:at:receiver:listDelegate:cell:perform:)``
/// as the hook's body.
@Suite("cell selection hooks")
struct SelectionHookTests {
    /// The Objective-C runtime's view of one selector: each class's own implementation, inherited ones found
    /// by walking up, as `class_getInstanceMethod` and `objc_msgSend` do.
    final class FakeRuntime: MethodTable {
        typealias Body = (_ receiver: AnyObject, _ list: FakeList, _ path: CellIndexPath) -> Void

        /// An `IMP`: a function with an address, so that two are equal only when they are the same function.
        struct Implementation: Equatable {
            let address: Int
            let body: Body
            static func == (a: Self, b: Self) -> Bool { a.address == b.address }
            func callAsFunction(_ receiver: AnyObject, _ list: FakeList, _ path: CellIndexPath) { body(receiver, list, path) }
        }

        private(set) var own: [ObjectIdentifier: Implementation] = [:]
        private var superclasses: [ObjectIdentifier: AnyClass] = [:]
        private var nextAddress = 0x1000

        /// A new function, as `imp_implementationWithBlock` makes one.
        func implementation(_ body: @escaping Body) -> Implementation {
            nextAddress += 16
            return Implementation(address: nextAddress, body: body)
        }

        /// Declares `cls` with `superclass`, and its own method with `body` if it has one.
        func declare(_ cls: AnyClass, superclass: AnyClass? = nil, body: Body? = nil) {
            if let superclass { superclasses[ObjectIdentifier(cls)] = superclass }
            if let body { own[ObjectIdentifier(cls)] = implementation(body) }
        }

        func implementation(in cls: AnyClass) -> Implementation? {
            var current: AnyClass? = cls
            while let candidate = current {
                if let found = own[ObjectIdentifier(candidate)] { return found }
                current = superclass(of: candidate)
            }
            return nil
        }

        /// Whether `cls` has a method of its own, for the tests to check.
        func definesOwn(in cls: AnyClass) -> Bool { own[ObjectIdentifier(cls)] != nil }

        func superclass(of cls: AnyClass) -> AnyClass? { superclasses[ObjectIdentifier(cls)] }

        func add(_ implementation: Implementation, to cls: AnyClass) -> Bool {
            guard own[ObjectIdentifier(cls)] == nil else { return false }
            own[ObjectIdentifier(cls)] = implementation
            return true
        }

        func replace(in cls: AnyClass, with implementation: Implementation) {
            own[ObjectIdentifier(cls)] = implementation
        }

        /// `objc_msgSend`: runs what `receiver`'s class runs now.
        func send(to receiver: AnyObject, of cls: AnyClass, list: FakeList, path: CellIndexPath) {
            implementation(in: cls)?(receiver, list, path)
        }
    }

    /// A table view: its delegate (weak, as UIKit's) and its cells' snapshots.
    final class FakeList {
        weak var delegate: AnyObject?
        let view = FakeView("UITableView", id: "orders")

        init(on root: FakeView) { root.add(view) }

        func cell(at path: CellIndexPath) -> FakeView {
            let cell = FakeView("UITableViewCell")
            cell.indexPath = path
            cell.add(FakeView("UILabel", text: "Order \(path.item)"))
            view.add(cell)
            return cell
        }
    }

    class BaseDelegate {}
    final class OverridingDelegate: BaseDelegate {}
    final class InheritingDelegate: BaseDelegate {}
    final class PropertiesDelegate: SpoorListDelegate {
        func spoorProperties(forCellAt indexPath: CellIndexPath, in list: AnyObject) -> Properties {
            ["order_index": .int(Int64(indexPath.item))]
        }
    }

    /// The app's code and what it ran.
    final class App {
        var ran: [String] = []
    }

    let f: Fixture
    let runtime = FakeRuntime()
    let app = App()
    let root = FakeView("UIView")
    var hooks = MethodHooks()

    init() throws {
        f = try Fixture()
        root.page = FakePage(Chain.page("MyApp.OrdersViewController"), parent: Chain.navigation)
        let runtime = runtime, app = app
        runtime.declare(BaseDelegate.self, body: { _, _, _ in app.ran.append("base") })
        let clock = f.clock
        runtime.declare(OverridingDelegate.self, superclass: BaseDelegate.self) { receiver, list, path in
            app.ran.append("override")
            // Past the tracker's 100 ms debounce, so a second click would show.
            clock.advance(by: .seconds(1))
            // `super.tableView(_:didSelectRowAt:)`: the superclass's implementation as it is now.
            runtime.implementation(in: BaseDelegate.self)?(receiver, list, path)
        }
        runtime.declare(InheritingDelegate.self, superclass: BaseDelegate.self)
        runtime.declare(PropertiesDelegate.self, body: { _, _, _ in app.ran.append("properties") })
    }

    /// Hooks `cls` as the glue's `setDelegate:` hook does.
    mutating func hook(_ cls: AnyClass) -> HookResult {
        let capture = f.capture
        let runtime = runtime
        return hooks.hook(cls, method: "tableView:didSelectRowAtIndexPath:", in: runtime) { original in
            runtime.implementation { receiver, list, path in
                capture.cellSelected(
                    in: list, at: path, receiver: receiver, listDelegate: list.delegate,
                    cell: { list.cell(at: path) }, perform: { original()(receiver, list, path) })
            }
        }
    }

    private func clicks() async -> [Event] { await f.events().filter { $0.name == "$AppClick" } }

    @Test(arguments: [true, false])
    mutating func anOverrideCallingSuperRecordsOneClick(superclassHookedFirst: Bool) async throws {
        let list = FakeList(on: root)
        let delegate = OverridingDelegate()
        list.delegate = delegate
        if superclassHookedFirst {
            #expect(hook(BaseDelegate.self) == .hooked)  // another list's delegate was a BaseDelegate
            #expect(hook(OverridingDelegate.self) == .hooked)
        } else {
            #expect(hook(OverridingDelegate.self) == .hooked)
            #expect(hook(BaseDelegate.self) == .hooked)
        }
        let path = CellIndexPath(section: 2, item: 7)
        runtime.send(to: delegate, of: OverridingDelegate.self, list: list, path: path)
        #expect(app.ran == ["override", "base"])
        let clicks = await clicks()
        #expect(clicks.count == 1)
        #expect(clicks.first?.string("$element_type") == "UITableView")
        #expect(clicks.first?.string("$element_id") == "orders")
        #expect(clicks.first?.string("$element_position") == "2:7")
        #expect(clicks.first?.string("$element_content") == "Order 7")
        #expect(clicks.first?.string("$element_path") == "UIView/UITableView[0]/UITableViewCell[2][-]")
    }

    @Test mutating func anInheritedImplementationIsNotRewrittenForASubclass() async throws {
        let list = FakeList(on: root)
        let inheriting = InheritingDelegate()
        list.delegate = inheriting
        #expect(hook(InheritingDelegate.self) == .hooked)
        #expect(hook(InheritingDelegate.self) == .alreadyHooked)
        #expect(runtime.definesOwn(in: InheritingDelegate.self))  // added to the subclass…
        // …while the superclass keeps its own: a BaseDelegate elsewhere selects without the hook.
        let other = FakeList(on: root)
        let base = BaseDelegate()
        other.delegate = base
        runtime.send(to: base, of: BaseDelegate.self, list: other, path: CellIndexPath(section: 0, item: 1))
        runtime.send(to: inheriting, of: InheritingDelegate.self, list: list, path: CellIndexPath(section: 0, item: 2))
        #expect(app.ran == ["base", "base"])
        let clicks = await clicks()
        #expect(clicks.map { $0.string("$element_position") } == ["0:2"])
    }

    @Test mutating func aCallForwardedToAnObjectThatIsNotTheListsDelegateIsNotAClick() async throws {
        let list = FakeList(on: root)
        let proxy = OverridingDelegate(), target = BaseDelegate()
        list.delegate = proxy
        #expect(hook(BaseDelegate.self) == .hooked)
        // The proxy (not hooked: it forwards) hands the call to `target`, which is not the list's delegate.
        runtime.send(to: target, of: BaseDelegate.self, list: list, path: CellIndexPath(section: 0, item: 0))
        #expect(app.ran == ["base"])
        #expect(await clicks().isEmpty)
        withExtendedLifetime(proxy) {}
    }

    @Test mutating func aForwardingDelegateHasNothingToHookAndIsReportedOnce() {
        final class ForwardingProxy {}
        let result = hook(ForwardingProxy.self)
        #expect(result == .noImplementation)
        for _ in 0..<2 {
            f.capture.listDelegateSet(ofType: "MyApp.RxTableViewDelegateProxy", hook: result, respondsToSelection: true)
        }
        // A delegate that does not handle selection, or one that was hooked, is not reported.
        f.capture.listDelegateSet(ofType: "MyApp.StaticListDelegate", hook: .noImplementation, respondsToSelection: false)
        f.capture.listDelegateSet(ofType: "MyApp.OrdersViewController", hook: .hooked, respondsToSelection: true)
        #expect(f.log.all.filter { $0.message.contains("forwards cell selection") }.map(\.message).count == 1)
        #expect(f.log.contains(.warning, "MyApp.RxTableViewDelegateProxy forwards cell selection"))
    }

    @Test mutating func theDelegateAddsPropertiesToItsCellsClicks() async throws {
        let list = FakeList(on: root)
        let delegate = PropertiesDelegate()
        list.delegate = delegate
        #expect(hook(PropertiesDelegate.self) == .hooked)
        runtime.send(to: delegate, of: PropertiesDelegate.self, list: list, path: CellIndexPath(section: 1, item: 3))
        let clicks = await clicks()
        #expect(clicks.count == 1)
        #expect(clicks.first?.properties["order_index"] == .int(3))
        #expect(app.ran == ["properties"])
    }
}
