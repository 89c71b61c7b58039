import SpoorModel
package import SpoorLog
import SpoorSystem

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
    /// Removes everything stored, durably (``Tracker/optOut(deleteStoredData:)``); what it removed. With
    /// `goneProcesses`, also what processes that are gone left in a shared storage directory (the erasing process
    /// does that; one that only follows another's erasure erases its own). `erasures`: how many erasures the store
    /// has then followed (a log notes it, so no adopter sends what it held before).
    func erase(goneProcesses: Bool, following erasures: UInt64) throws -> ErasedLogContents
    /// The highest sequence number stored, so a restart after a crash never reuses one.
    func lastSequence() -> UInt64?
    /// Events the store dropped (full, or unwritable).
    var droppedCount: Int { get }
    /// Corrupt records the store found and skipped.
    var corruptCount: Int { get }
    /// The durable log the store keeps events in, which uploads send from; nil for a store without one (a
    /// tracker on it cannot upload, and refuses a ``Configuration/Upload/serverURL``).
    var durableLog: EventLog? { get }
    /// Sets what runs after each append with the number of records waiting in the durable log (the uploader's
    /// bulk trigger). A store without a durable log never calls it.
    func onAppend(_ body: (@Sendable (Int) -> Void)?)
}


