/// One method of every class, as a runtime sees it: the Objective-C runtime in the UIKit glue, a fake in
/// tests. ``MethodHooks`` only goes through this, so its rules are tested on Linux.
public protocol MethodTable {
    /// What the runtime calls: an `IMP` for Objective-C. Equal implementations are the same code.
    associatedtype Implementation: Equatable
    /// The implementation `cls`'s instances run: its own, else the nearest superclass's; `nil` when none.
    func implementation(in cls: AnyClass) -> Implementation?
    /// `cls`'s superclass, `nil` at a root class.
    func superclass(of cls: AnyClass) -> AnyClass?
    /// Gives `cls` a method of its own with `implementation` (`class_addMethod`); `false` if it has one.
    func add(_ implementation: Implementation, to cls: AnyClass) -> Bool
    /// Replaces `cls`'s own method's implementation (`class_replaceMethod`).
    func replace(in cls: AnyClass, with implementation: Implementation)
    /// Frees an implementation made for a hook that was not installed (`imp_removeBlock`).
    func discard(_ implementation: Implementation)
}

/// What ``MethodHooks/hook(_:method:in:wrap:)`` did.
public enum HookResult: Sendable, Hashable {
    /// The class now runs the hook.
    case hooked
    /// The class was hooked before: nothing changed.
    case alreadyHooked
    /// The class has no implementation to hook (a delegate that forwards messages instead).
    case noImplementation
}

/// Hooks methods class by class, each once.
///
/// A class that inherits the method gets a method of its own (`class_addMethod`) that calls whatever its
/// superclass runs at call time, so the superclass's implementation is never rewritten on behalf of one
/// subclass, and hooking the superclass later does not bypass it. A class that defines the method has that
/// definition replaced. Hooking both a class and its subclass means a subclass override calling `super`
/// runs the hook twice; the hook itself must count one event (``AutoCapture`` does, per selection).
public struct MethodHooks {
    private var hooked: Set<Key> = []

    private struct Key: Hashable {
        var cls: ObjectIdentifier
        var method: String
    }

    /// An empty set of hooks.
    public init() {}

    /// Hooks `method` (a selector name, to tell hooks apart) on `cls`, once. `wrap` gets a function giving the
    /// implementation to call on: `cls`'s own, or its superclass's as it is at call time.
    @discardableResult
    public mutating func hook<Table: MethodTable>(
        _ cls: AnyClass, method: String, in table: Table,
        wrap: (_ original: @escaping () -> Table.Implementation) -> Table.Implementation
    ) -> HookResult {
        guard let current = table.implementation(in: cls) else { return .noImplementation }
        guard hooked.insert(Key(cls: ObjectIdentifier(cls), method: method)).inserted else { return .alreadyHooked }
        let superclass: AnyClass? = table.superclass(of: cls)
        // The class runs what its superclass runs: the method is inherited.
        if current == superclass.flatMap(table.implementation(in:)) {
            // The superclass's implementation at call time, falling back to the one found now (methods are
            // never removed, so the fallback only guards a runtime that misbehaves).
            let inherited = wrap { superclass.flatMap(table.implementation(in:)) ?? current }
            if table.add(inherited, to: cls) { return .hooked }
            // The class has a method of its own after all (one equal to its superclass's): replace that one,
            // and free the implementation the runtime refused, which holds the hook's block.
            table.discard(inherited)
        }
        table.replace(in: cls, with: wrap { current })
        return .hooked
    }
}

/// The hooks the UIKit glue installs, by what they capture.
public enum UIKitHook: String, Sendable, CaseIterable {
    /// `UIViewController.viewDidAppear(_:)` and `viewDidDisappear(_:)`.
    case pages
    /// `UIApplication.sendAction(_:to:from:for:)` and `UIControl.sendAction(_:)` (controls' `UIAction`s).
    case actions
    /// `setDelegate:` of table and collection views, then each delegate class's selection method.
    case cellSelection
    /// `UIGestureRecognizer`'s `init(target:action:)`, `addTarget(_:action:)` and `removeTarget(_:action:)`.
    case gestures
}
