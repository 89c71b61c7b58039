internal import SpoorModel

// What each UIKit hook does once the Objective-C runtime called it. The glue's blocks are one call here each,
// with UIKit's reads passed in as readers; the tests call the same functions with fakes. Every body enters
// through `enter`: on the main thread it runs on the main actor with the installed capture; off it, or
// before any install, it runs the original method alone.

/// A value a hook hands to the main actor. `enter` uses it only after checking that this is the main thread,
/// for the synchronous call there: the value never crosses threads, which is what `Sendable` would prove.
package struct MainThreadValue<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}

/// How the glue reads what `sendAction` hands it. The reads run on the main actor, inside the hook.
package struct ActionReader<Sender: AnyObject, Event: AnyObject>: Sendable {
    /// Whether the sender is a bar item, and its kind when it is a view.
    package var sender: @MainActor @Sendable (Sender) -> (isBarItem: Bool, viewKind: ViewKind?)
    /// Whether the event is a touch event, and whether one of its touches ended.
    package var event: @MainActor @Sendable (Event) -> (isTouches: Bool, aTouchEnded: Bool)
    /// The sender's snapshot, when it is a view.
    package var node: @MainActor @Sendable (Sender) -> ViewNode?

    package init(
        sender: @escaping @MainActor @Sendable (Sender) -> (isBarItem: Bool, viewKind: ViewKind?),
        event: @escaping @MainActor @Sendable (Event) -> (isTouches: Bool, aTouchEnded: Bool),
        node: @escaping @MainActor @Sendable (Sender) -> ViewNode?
    ) {
        self.sender = sender
        self.event = event
        self.node = node
    }
}

/// How the glue reads a table or collection view whose cell was selected.
package struct ListReader<List: AnyObject>: Sendable {
    /// The list's delegate now.
    package var delegate: @MainActor @Sendable (List) -> AnyObject?
    /// The snapshot of the cell at the index path, `nil` when the list has none there (not laid out yet).
    package var cell: @MainActor @Sendable (List, CellIndexPath) -> ViewNode?
    /// Lays the list out (`layoutIfNeeded`), so that a selected cell not yet made is.
    package var layout: @MainActor @Sendable (List) -> Void

    package init(
        delegate: @escaping @MainActor @Sendable (List) -> AnyObject?,
        cell: @escaping @MainActor @Sendable (List, CellIndexPath) -> ViewNode?,
        layout: @escaping @MainActor @Sendable (List) -> Void
    ) {
        self.delegate = delegate
        self.cell = cell
        self.layout = layout
    }
}

/// How the glue reads a gesture recognizer that called its targets.
package struct GestureReader<Recognizer: AnyObject>: Sendable {
    /// Where the gesture is.
    package var phase: @MainActor @Sendable (Recognizer) -> GesturePhase
    /// The snapshot of the recognizer's view.
    package var view: @MainActor @Sendable (Recognizer) -> ViewNode?

    package init(
        phase: @escaping @MainActor @Sendable (Recognizer) -> GesturePhase,
        view: @escaping @MainActor @Sendable (Recognizer) -> ViewNode?
    ) {
        self.phase = phase
        self.view = view
    }
}

extension AutoCapture {
    /// How every hook enters the model: `body` on the main actor with `capture` (the installed one). A hook
    /// reached off the main thread captures nothing (UIKit must not be read there), logs once, and runs
    /// `original`, the original method alone; so does one reached before any install. Never traps.
    /// `isMainThread` is the hook's `Thread.isMainThread`; `body` gets `original` to run it where it must.
    package static func enter<Result: Sendable>(
        _ hook: UIKitHook, capture: AutoCapture?, isMainThread: Bool, original: () -> Result,
        _ body: @MainActor (AutoCapture, _ original: () -> Result) -> Result
    ) -> Result {
        guard let capture else { return original() }
        guard isMainThread else {
            capture.hookReachedOffMainThread(hook.rawValue)
            return original()
        }
        return withoutActuallyEscaping(original) { original in
            withoutActuallyEscaping(body) { body in
                let carried = MainThreadValue((original, body))
                return MainActor.assumeIsolated { carried.value.1(capture, carried.value.0) }
            }
        }
    }

    /// `viewDidAppear(_:)` / `viewDidDisappear(_:)` of `controller`. The page appears before the original
    /// `viewDidAppear` runs, so events the app tracks there follow its `$AppViewScreen`; it leaves after the
    /// original `viewDidDisappear`, so events tracked there still belong to it.
    package static func viewAppearanceHook<Controller: AnyObject>(
        appeared: Bool, controller: Controller, isMainThread: Bool, capture: AutoCapture? = installed,
        reader: PageReader<Controller>, original: () -> Void
    ) {
        let carried = MainThreadValue(controller)
        enter(.pages, capture: capture, isMainThread: isMainThread, original: original) { capture, original in
            let controller = carried.value
            if appeared {
                capture.pageAppeared(PageSnapshots.node(of: controller, reader: reader), object: controller)
                original()
            } else {
                original()
                capture.pageDisappeared(object: controller)
            }
        }
    }

    /// `UIApplication.sendAction(_:to:from:for:)`: the click, then the action (`original`).
    package static func sendActionHook<Sender: AnyObject, Event: AnyObject>(
        sender: Sender?, event: Event?, isMainThread: Bool, capture: AutoCapture? = installed,
        reader: ActionReader<Sender, Event>, original: () -> Bool
    ) -> Bool {
        let carried = MainThreadValue((sender, event))
        return enter(.actions, capture: capture, isMainThread: isMainThread, original: original) { capture, original in
            let (sender, event) = carried.value
            let facts = sender.map(reader.sender)
            let touches = event.map(reader.event)
            return capture.actionSent(
                by: ActionSender.classify(isBarItem: facts?.isBarItem ?? false, viewKind: facts?.viewKind),
                event: ActionEvent.classify(
                    hasEvent: event != nil, isTouches: touches?.isTouches ?? false, aTouchEnded: touches?.aTouchEnded ?? false),
                view: { sender.flatMap(reader.node) }, perform: original)
        }
    }

    /// `UIControl.sendAction(_:)`: a control runs one of its `UIAction`s, which never pass through
    /// `UIApplication.sendAction`. The click, then the action (`original`).
    package static func actionHandlerHook<Control: AnyObject, Event: AnyObject>(
        control: Control, isMainThread: Bool, capture: AutoCapture? = installed, reader: ActionReader<Control, Event>,
        original: () -> Void
    ) {
        let carried = MainThreadValue(control)
        enter(.actions, capture: capture, isMainThread: isMainThread, original: original) { capture, original in
            let control = carried.value
            let facts = reader.sender(control)
            capture.actionSent(
                by: ActionSender.classify(isBarItem: facts.isBarItem, viewKind: facts.viewKind), event: .actionHandler,
                view: { reader.node(control) }, perform: original)
        }
    }

    /// A selection delegate method (`tableView(_:didSelectRowAt:)`, `collectionView(_:didSelectItemAt:)`) of
    /// `receiver` for the cell at `path` of `list`. A cell not made yet is made by laying the list out, once
    /// (as the Sensors SDK does). A receiver adopting ``SpoorListDelegate`` adds its properties to the click.
    package static func cellSelectionHook<List: AnyObject>(
        receiver: AnyObject, list: List, at path: CellIndexPath, isMainThread: Bool, capture: AutoCapture? = installed,
        reader: ListReader<List>, original: () -> Void
    ) {
        let carried = MainThreadValue((receiver, list))
        enter(.cellSelection, capture: capture, isMainThread: isMainThread, original: original) { capture, original in
            let (receiver, list) = carried.value
            capture.cellSelected(
                in: list, at: path, receiver: receiver, listDelegate: reader.delegate(list),
                cell: {
                    if let cell = reader.cell(list, path) { return cell }
                    reader.layout(list)
                    return reader.cell(list, path)
                },
                delegateProperties: { (receiver as? any SpoorListDelegate)?.spoorProperties(forCellAt: path, in: list) ?? [:] },
                perform: original)
        }
    }

    /// `setDelegate:` of a table or collection view gave it a delegate of class `typeNames`: `hook` hooks the
    /// class's selection method, unless it is SwiftUI's (its rows are SwiftUI's to report). A delegate with
    /// nothing to hook that answers selection forwards it, which is logged once per class.
    package static func listDelegateHook(
        typeNames: [String], capture: AutoCapture? = installed, respondsToSelection: () -> Bool, hook: () -> HookResult
    ) {
        guard CaptureRules.hooksListDelegate(typeNames) else { return }
        let result = hook()
        capture?.listDelegateSet(ofType: typeNames.first ?? "", hook: result, respondsToSelection: respondsToSelection())
    }

    /// The observer's action: `recognizer` called its targets.
    package static func gestureHook<Recognizer: AnyObject>(
        recognizer: Recognizer, isMainThread: Bool, capture: AutoCapture? = installed, reader: GestureReader<Recognizer>
    ) {
        let carried = MainThreadValue(recognizer)
        enter(.gestures, capture: capture, isMainThread: isMainThread, original: {}) { capture, _ in
            let recognizer = carried.value
            capture.gestureRecognized(recognizer, phase: reader.phase(recognizer), view: { reader.view(recognizer) })
        }
    }

    /// `addTarget(_:action:)` of a recognizer of class chain `typeNames`: when the target is the app's on a
    /// tap or long-press recognizer, `addObserver` first puts the glue's observer ahead of it, so the click is
    /// recorded before the app's action runs; then `original` adds the target.
    package static func addTargetHook(
        recognizer: AnyObject, typeNames: [String], target: AnyObject?, action: String?, isObserver: Bool,
        capture: AutoCapture? = installed, addObserver: () -> Void, original: () -> Void
    ) {
        if !isObserver, capture?.gestureTargetAdded(to: recognizer, typeNames: typeNames, target: target, action: action) == true {
            addObserver()
        }
        original()
    }

    /// `removeTarget(_:action:)`: forgets the matching app targets, then `original` removes them.
    package static func removeTargetHook(
        recognizer: AnyObject, target: AnyObject?, action: String?, capture: AutoCapture? = installed, original: () -> Void
    ) {
        capture?.gestureTargetRemoved(from: recognizer, target: target, action: action)
        original()
    }

    /// `init(target:action:)` returned: the target it added is put back through the hooked `addTarget`
    /// (`readd`), which puts the observer ahead of it. Only with a target and an action, on the main thread.
    static func recognizerInitHook(
        hasTargetAndAction: Bool, isMainThread: Bool, capture: AutoCapture? = installed, readd: @MainActor () -> Void
    ) {
        guard hasTargetAndAction else { return }
        enter(.gestures, capture: capture, isMainThread: isMainThread, original: {}) { _, _ in readd() }
    }
}
