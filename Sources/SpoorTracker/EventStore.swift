public import SpoorModel
public import SpoorLog
public import SpoorSystem

/// Where the tracker's writer puts finished events: the durable log in production, memory in tests.
///
/// `append`, `sync` and `close` are called from the writer thread only, one at a time.
package protocol EventStore: AnyObject, Sendable {
    /// Stores a group of events, in order. Never throws: failures are logged and counted by the store. The store
    /// may change the events as it takes them (the log store strips what a context record holds, in place);
    /// the caller discards them afterwards.
    func append(_ events: inout [StoredEvent])
    /// Makes everything appended so far durable.
    func sync() throws
    /// Syncs and releases the store; nothing is appended afterwards.
    func close()
    /// Removes everything stored, durably (``Tracker/optOut(deleteStoredData:)``); what it removed.
    func erase() throws -> ErasedLogContents
    /// The highest sequence number stored, so a restart after a crash never reuses one.
    func lastSequence() -> UInt64?
    /// Events the store dropped (full, or unwritable).
    var droppedCount: Int { get }
    /// Corrupt records the store found and skipped.
    var corruptCount: Int { get }
}

extension EventStore {
    /// Stores that keep nothing beyond the process (test doubles) have nothing to erase.
    package func erase() throws -> ErasedLogContents { ErasedLogContents() }
}

/// Keeps events in memory: for tests and for hosts that want no disk at all.
final class InMemoryEventStore: EventStore {
    private struct Contents {
        var events: [Event] = []
        var appendCalls = 0
        var syncCalls = 0
        var closed = false
    }

    private let contents = Locked(Contents())

    init() {}

    /// Stores complete events (tests use this to stand for what an earlier run left behind).
    package func append(_ events: [Event]) {
        var stored = events.map { StoredEvent(event: $0, base: nil, firstDay: false) }
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
    package var droppedCount: Int { 0 }
    package var corruptCount: Int { 0 }

    /// Everything stored so far.
    var events: [Event] { contents.withLock { $0.events } }
    /// How many times the store was synced.
    var syncCount: Int { contents.withLock { $0.syncCalls } }
    /// Whether the store was closed.
    var isClosed: Bool { contents.withLock { $0.closed } }
}
