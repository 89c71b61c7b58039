public import SpoorModel
package import SpoorLog
public import SpoorTracker
import SpoorSystem

/// Keeps a tracker's events in memory instead of in a log on disk, for tests of code that tracks: what the
/// tracker's writer stored, how often it synced, whether it closed.
///
/// A tracker on it (`Tracker(configuration:store:)`, below) validates, stamps and merges events as
/// any tracker does; they appear in ``events`` once the writer has stored them, which ``/SpoorTracker/Tracker/flush(timeout:)``
/// waits for. It has no durable log, so such a tracker cannot upload (it refuses a
/// ``/SpoorTracker/Configuration/serverURL``). The tracker still keeps its identity and lifecycle state in the
/// configuration's storage directory.
///
/// ```swift
/// let store = InMemoryEventStore()
/// let tracker = try Tracker(configuration: Configuration(storageDirectory: directory), store: store)
/// tracker.track("Export", properties: ["format": "pdf"])
/// await tracker.flush()
/// #expect(store.events.map(\.name) == ["Export"])
/// ```
public final class InMemoryEventStore: EventStore {
    private struct Contents {
        var events: [Event] = []
        var appendCalls = 0
        var syncCalls = 0
        var closed = false
    }

    private let contents = Locked(Contents())

    /// Creates an empty store.
    public init() {}

    /// Stores complete events as if an earlier run had left them behind (their sequence numbers count for the
    /// next tracker on the store).
    public func append(_ events: [Event]) {
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
    package func erase(goneProcesses: Bool, following erasures: UInt64) throws -> ErasedLogContents {
        contents.withLock { c in
            defer { c.events = [] }
            return ErasedLogContents(records: c.events.count)
        }
    }
    package var durableLog: EventLog? { nil }
    package func onAppend(_ body: (@Sendable (Int) -> Void)?) {}
    package var droppedCount: Int { 0 }
    package var corruptCount: Int { 0 }

    /// Every event stored so far, in the order the tracker stored them, with super properties and presets merged.
    public var events: [Event] { contents.withLock { $0.events } }
    /// How many times the tracker synced the store.
    public var syncCount: Int { contents.withLock { $0.syncCalls } }
    /// Whether the tracker closed the store (at ``/SpoorTracker/Tracker/shutdown(timeout:)``).
    public var isClosed: Bool { contents.withLock { $0.closed } }
}

extension Tracker {
    /// Creates a tracker that keeps its events in `store` rather than in a log on disk (see
    /// ``InMemoryEventStore``).
    ///
    /// - Throws: ``/SpoorTracker/ConfigurationError`` naming the first invalid field (a
    ///   ``/SpoorTracker/Configuration/serverURL`` among them: the store cannot upload).
    public convenience init(configuration: Configuration, store: InMemoryEventStore) throws(ConfigurationError) {
        try self.init(configuration: configuration, store: store as any EventStore)
    }
}
