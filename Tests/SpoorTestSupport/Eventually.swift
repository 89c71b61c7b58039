/// Looks at `condition` every millisecond until it holds, for at most 300 s of real time (a loaded test run
/// can hold threads back for a minute): for a state another thread or task reaches with no signal to await.
/// Returns at once when it already holds.
public func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(300)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
