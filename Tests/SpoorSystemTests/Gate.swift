import SpoorSystem

/// How long these tests wait for what is bound to happen: minutes, so a loaded machine still passes; a passing
/// test never waits it out.
let testBound: Duration = .seconds(300)

/// A gate threads wait at until a test opens it (or `testBound` passes).
struct Gate: Sendable {
    private let opened = Promise<Void>()

    func open() { opened.fulfil(()) }

    /// Blocks the calling thread until the gate is open; false if `testBound` passed first, and the gate is then
    /// opened for everyone else, so that a test that went wrong waits the bound out once, not once per thread.
    func pass() -> Bool {
        if opened.wait(timeout: testBound) != nil { return true }
        opened.fulfil(())
        return false
    }
}
