package import SpoorModel
package import SpoorLog
package import SpoorTracker
import SpoorSystem

/// Keeps events in memory, for tests of the tracker: what the writer hands over, how often it syncs, whether it
/// closed. It has no durable log, so a tracker on it cannot upload.
package final class InMemoryEventStore: EventStore {
    private struct Contents {
        var events: [Event] = []
        var appendCalls = 0
        var syncCalls = 0
        var closed = false
    }

    private let contents = Locked(Contents())

    package init() {}

    /// Stores complete events (tests use this to stand for what an earlier run left behind).
    package func append(_ events: [Event]) {
        var stored = events.map { StoredEvent(complete: $0, firstDay: false) }
        append(&stored)
    }

    package func append(_ events: inout [StoredEvent]) {
        let complete = events.map(\.merged)
        contents.withLock {
            $0.events.append(contentsOf: complete)
            $0.appendCalls += 1
        }
    }

    package func sync() throws { contents.withLock { $0.syncCalls += 1 } }
    package func close() { contents.withLock { $0.closed = true } }
    package func lastSequence() -> UInt64? { contents.withLock { $0.events.map(\.sequence).max() } }
    package func erase() throws -> ErasedLogContents {
        contents.withLock { c in
            defer { c.events = [] }
            return ErasedLogContents(records: c.events.count)
        }
    }
    package var durableLog: EventLog? { nil }
    package func onAppend(_ body: (@Sendable (Int) -> Void)?) {}
    package var droppedCount: Int { 0 }
    package var corruptCount: Int { 0 }

    /// Everything stored so far.
    package var events: [Event] { contents.withLock { $0.events } }
    /// How many times the store was synced.
    package var syncCount: Int { contents.withLock { $0.syncCalls } }
    /// Whether the store was closed.
    package var isClosed: Bool { contents.withLock { $0.closed } }
}
