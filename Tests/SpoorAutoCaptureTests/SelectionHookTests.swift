import SpoorModel
import SpoorTracker
import Testing

import SpoorAutoCapture

/// The cell selection path end to end on a fake runtime: ``MethodHooks`` hooking delegate classes the way the
/// glue does on the Objective-C runtime, each hooked method running the glue's own hook body
/// (`AutoCapture.cellSelectionHook`) with a reader of fake lists.
@Suite("cell selection hooks")
@MainActor
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
        /// Implementations made and then freed, by address (`imp_removeBlock`).
        private(set) var discarded: [Int] = []

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

        /// Gives `cls` a method of its own that is `implementation` (another library's hook did).
        func define(_ cls: AnyClass, as implementation: Implementation) { own[ObjectIdentifier(cls)] = implementation }

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

        func discard(_ implementation: Implementation) { discarded.append(implementation.address) }

        /// `objc_msgSend`: runs what `receiver`'s class runs now.
        func send(to receiver: AnyObject, of cls: AnyClass, list: FakeList, path: CellIndexPath) {
            implementation(in: cls)?(receiver, list, path)
        }
    }

    /// A table view: its delegate (weak, as UIKit's), its cells, made when it is laid out.
    final class FakeList {
        weak var delegate: AnyObject?
        let view = FakeView("UITableView", id: "orders")
        /// Whether cells exist before a layout (a selection made programmatically may come before one).
        var laidOut = true
        private(set) var layouts = 0

        init(on root: FakeView) { root.add(view) }

        func layout() {
            layouts += 1
            laidOut = true
        }

        /// The cell at `path`, as `cellForRow(at:)`: `nil` until laid out.
        func cell(at path: CellIndexPath) -> FakeView? {
            guard laidOut else { return nil }
            let cell = FakeView("UITableViewCell")
            cell.indexPath = path
            cell.add(FakeView("UILabel", text: "Order \(path.item)"))
            view.add(cell)
            return cell
        }
    }

    /// What the glue reads of a list, for fake lists.
    static let reader = ListReader<FakeList>(
        delegate: { $0.delegate }, cell: { list, path in list.cell(at: path)?.node() }, layout: { $0.layout() })

    class BaseDelegate {}
    final class OverridingDelegate: BaseDelegate {}
    final class InheritingDelegate: BaseDelegate {}
    final class PropertiesDelegate: SpoorListDelegate {
        // Main-actor state, as a view controller has: SpoorListDelegate is main-actor isolated.
        var prefix = "order"
        func spoorProperties(forCellAt indexPath: CellIndexPath, in list: AnyObject) -> Properties {
            ["\(prefix)_index": .int(Int64(indexPath.item))]
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

    /// Hooks `cls` as the glue's `setDelegate:` hook does, each hooked method running the glue's hook body.
    mutating func hook(_ cls: AnyClass) -> HookResult {
        let capture = f.capture
        let runtime = runtime
        return hooks.hook(cls, method: "tableView:didSelectRowAtIndexPath:", in: runtime) { original in
            runtime.implementation { receiver, list, path in
                AutoCapture.cellSelectionHook(
                    receiver: receiver, list: list, at: path, isMainThread: true, capture: capture, reader: Self.reader
                ) { original()(receiver, list, path) }
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
        #expect(runtime.discarded.isEmpty)
    }

    @Test mutating func aMethodTheRuntimeRefusesToAddIsFreedAndTheOwnOneReplaced() async throws {
        // The subclass already has a method of its own, the same function as its superclass's (another
        // library put it there): class_addMethod fails, and the block made for it must not leak.
        let list = FakeList(on: root)
        let inheriting = InheritingDelegate()
        list.delegate = inheriting
        runtime.define(InheritingDelegate.self, as: try #require(runtime.implementation(in: BaseDelegate.self)))
        #expect(hook(InheritingDelegate.self) == .hooked)
        #expect(runtime.discarded.count == 1)
        runtime.send(to: inheriting, of: InheritingDelegate.self, list: list, path: CellIndexPath(section: 0, item: 4))
        #expect(app.ran == ["base"])
        #expect(await clicks().map { $0.string("$element_position") } == ["0:4"])
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
        var results: [HookResult] = []
        for _ in 0..<2 {
            AutoCapture.listDelegateHook(
                typeNames: ["MyApp.RxTableViewDelegateProxy", "NSObject"], capture: f.capture, respondsToSelection: { true },
                hook: { let result = hook(ForwardingProxy.self); results.append(result); return result })
        }
        #expect(results == [.noImplementation, .noImplementation])
        // A delegate that does not handle selection, or one that was hooked, is not reported.
        AutoCapture.listDelegateHook(
            typeNames: ["MyApp.StaticListDelegate"], capture: f.capture, respondsToSelection: { false }, hook: { .noImplementation })
        AutoCapture.listDelegateHook(
            typeNames: ["MyApp.OrdersViewController"], capture: f.capture, respondsToSelection: { true }, hook: { .hooked })
        #expect(f.log.all.filter { $0.message.contains("forwards cell selection") }.map(\.message).count == 1)
        #expect(f.log.contains(.warning, "MyApp.RxTableViewDelegateProxy forwards cell selection"))
    }

    @Test func swiftUIsOwnListDelegatesAreNotHooked() {
        var hooked = 0
        for delegate in ["SwiftUI.ListCoreCoordinator", "_TtC7SwiftUIP33_ABCDEF17ListCoreCoordinator"] {
            AutoCapture.listDelegateHook(
                typeNames: [delegate, "NSObject"], capture: f.capture, respondsToSelection: { true },
                hook: { hooked += 1; return .hooked })
        }
        AutoCapture.listDelegateHook(
            typeNames: ["MyApp.OrdersViewController"], capture: f.capture, respondsToSelection: { true },
            hook: { hooked += 1; return .hooked })
        #expect(hooked == 1)
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

    @Test mutating func aCellNotYetMadeIsMadeByLayingTheListOut() async throws {
        // cellForRow(at:) is nil for a row selected before the list was laid out: lay out, ask again.
        let list = FakeList(on: root)
        list.laidOut = false
        let delegate = PropertiesDelegate()
        list.delegate = delegate
        #expect(hook(PropertiesDelegate.self) == .hooked)
        runtime.send(to: delegate, of: PropertiesDelegate.self, list: list, path: CellIndexPath(section: 0, item: 5))
        #expect(list.layouts == 1)
        #expect(await clicks().map { $0.string("$element_content") } == ["Order 5"])
    }

    @Test mutating func aHookReachedOffTheMainThreadRunsTheDelegateAlone() async throws {
        let list = FakeList(on: root)
        let delegate = PropertiesDelegate()
        list.delegate = delegate
        AutoCapture.cellSelectionHook(
            receiver: delegate, list: list, at: CellIndexPath(section: 0, item: 1), isMainThread: false, capture: f.capture,
            reader: Self.reader
        ) { app.ran.append("original") }
        #expect(app.ran == ["original"])
        #expect(await clicks().isEmpty)
        #expect(f.log.contains(.warning, "the cellSelection hook was reached off the main thread"))
    }
}
