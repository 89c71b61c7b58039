/// A change of lifecycle state.
package struct LifecycleTransition: Sendable, Hashable {
    package var from: LifecycleState
    package var to: LifecycleState

    package init(from: LifecycleState, to: LifecycleState) {
        self.from = from
        self.to = to
    }
}

/// The lifecycle state machine: signals in, state transitions out.
///
/// The single rule "a signal that would move the machine to the state it is already in does nothing"
/// removes the duplicates the platform produces (two `didEnterBackground` on lock screen, resign/active
/// pairs for notification centre and incoming calls).
package struct LifecycleStateMachine: Sendable, Hashable {
    package init() {}

    package private(set) var state: LifecycleState = .initial

    /// Applies `signal`; returns the transition it caused, or `nil` when the state stays the same.
    package mutating func handle(_ signal: LifecycleSignal) -> LifecycleTransition? {
        guard let target = Self.target(of: signal, from: state), target != state else { return nil }
        let transition = LifecycleTransition(from: state, to: target)
        state = target
        return transition
    }

    /// The state `signal` leads to from `state`, or `nil` when the signal means nothing there.
    package static func target(of signal: LifecycleSignal, from state: LifecycleState) -> LifecycleState? {
        if state == .terminated { return nil }
        switch signal {
        case .didFinishLaunching(.background):
            // A launch only happens once; a late passive-launch notification after a start means nothing.
            return state == .initial ? .startedPassively : nil
        case .didFinishLaunching(.inactive), .willEnterForeground, .willResignActive:
            // The start comes with didBecomeActive, the end with didEnterBackground.
            return nil
        case .didBecomeActive:
            return .started
        case .didEnterBackground:
            // Before any launch there is no session to end.
            return state == .initial ? nil : .ended
        case .willTerminate:
            return .terminated
        }
    }
}
