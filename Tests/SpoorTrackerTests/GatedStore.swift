import SpoorLog
import SpoorModel
import SpoorSystem
import SpoorTestSupport
import SpoorTracker

/// A store whose `append` waits until the test opens its gate (a writer stuck on a slow disk), keeping what it was
/// given. The wait has the test bound, so a test that fails before opening the gate does not leave the writer
/// waiting for good.
final class GatedStore: EventStore, Sendable {
    private let opened = Promise<Void>()
    private let events = Locked<[Event]>([])
    /// Fulfilled when the writer is inside `append`, waiting at the gate.
    let writerStuck = Promise<Void>()
    /// Fulfilled when the writer closes the store.
    let closed = Promise<Void>()

    func append(_ stored: inout [StoredEvent]) {
        writerStuck.fulfil(())
        _ = opened.wait(timeout: testBound)
        let merged = stored.map(\.merged)
        events.withLock { $0 += merged }
    }

    /// Lets the writer (and every later append) through.
    func openGate() { opened.fulfil(()) }

    /// What the writer appended so far.
    var appended: [Event] { events.withLock { $0 } }

    func sync() throws {}
    func close() { closed.fulfil(()) }
    func lastSequence() -> UInt64? { nil }
    var droppedCount: Int { 0 }
    var corruptCount: Int { 0 }
    var durableLog: EventLog? { nil }
    func onAppend(_ body: (@Sendable (Int) -> Void)?) {}
    func erase(goneProcesses: Bool, following erasures: UInt64) throws -> ErasedLogContents { ErasedLogContents() }
}
