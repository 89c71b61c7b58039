import Foundation

#if canImport(Glibc)
import Glibc
#endif
import Logging
import SpoorModel
import SpoorLog
package import SpoorSystem
import SpoorUpload
import SpoorWire

/// The memory double buffer and its single writer: callers never wait for encoding or I/O, and one thread owns
/// the store, so events reach it in acceptance order without a lock around the writes.
///
/// Callers append captured events to the front buffer under a short lock; one writer thread swaps it for the
/// back buffer, merges properties, and hands the finished events to the ``EventStore``. No lock is held while
/// the writer merges, encodes or does I/O.
///
/// The rules live in ``PipelineState`` (identity, sessions, the writer's queue); this class is their driver:
/// each call decides under the lock, then acts after releasing it (wakes the writer, releases waiting callers,
/// answers flushes).
package final class EventPipeline: @unchecked Sendable {
    // @unchecked: `state` is locked; the rest is immutable or the writer thread's own.
    private let state: Locked<PipelineState>
    // The writer thread parks on `wake` between groups of events, and callers blocked at the buffer bound park on
    // `space`. The decision to wait or to signal is taken under `state`; the signal is given after it is released.
    private let wake = Semaphore()
    private let space = Semaphore()
    package let store: any EventStore
    private let stateFile: PersistentStateFile
    private let logger: Logger
    /// Wake a lingering writer once this many events wait.
    static let wakeThreshold = 512
    /// The most events handed to the store at once.
    static let groupSize = 256
    /// How long the writer lets a small batch grow before writing it.
    private let linger: Duration = .milliseconds(2)
    /// ``Configuration/Tracking/beforeRecord``; `nil` keeps the splice fast path.
    private let hook: (@Sendable (inout HookEvent) throws -> HookDecision)?
    private let onRejection: (@Sendable (EventRejection) -> Void)?
    /// Events the hook rejected, by rule, and dropped.
    let hookRejections = Locked<[ValidationRule: Int]>([:])
    let hookDropped = Locked(0)
    /// Fulfilled the first time a caller waits at the buffer bound: what a test awaits to know the bound holds.
    package let firstBlockedProducer = Promise<Void>()
    /// ``Configuration/Diagnostics/logEvents``: each stored event goes to the logger as a JSON line, at debug level.
    private let logEvents: Bool
    let metrics: TrackerMetrics?
    /// A released tracker's writer still using `store` (handed over, see ``StoreHandover``): this writer starts
    /// once it has finished, so the events keep their order and each is written once.
    private let predecessor: Promise<Bool>?
    /// Whether the store is closed at the end or handed to the next tracker over the same directory.
    let handover = StoreHandover()
    /// Told, outside the lock, when another process's change to the shared state turned consent around.
    private let consentObserver = Locked(ConsentObserver())
    /// The writer thread's own: the sequence numbers it gives events, and the least number the first lease may
    /// give (past the records the log already holds, which an older Spoor may have numbered past the state file).
    private var leases = SequenceLeases()
    private let sequenceFloor: UInt64
    /// The writer thread's own: after a lease found the lock held past its wait, the next ones only try it (a
    /// stuck holder costs one wait, not one per stretch), until one succeeds.
    private var leaseLockBusy = false

    /// A consent observer (a closure kept in a struct: a closure stored as a `Locked` value directly is converted
    /// again on every read).
    private struct ConsentObserver {
        var call: (@Sendable (_ optedOut: Bool) -> Void)?
        /// Called once an erasure another process made was carried out here (uploads may go on).
        var resume: (@Sendable () -> Void)?
    }

    init(
        context: PipelineContext, persisted: PersistedState, saveNeeded: Bool = false, store: any EventStore,
        stateFile: PersistentStateFile, generation: UInt64 = 0, unsaved: [SharedChange] = [], sequenceFloor: UInt64 = 0,
        logger: Logger,
        hook: (@Sendable (inout HookEvent) throws -> HookDecision)? = nil,
        onRejection: (@Sendable (EventRejection) -> Void)? = nil,
        logEvents: Bool = false, metrics: TrackerMetrics? = nil, predecessor: Promise<Bool>? = nil
    ) {
        self.logEvents = logEvents
        self.metrics = metrics
        state = Locked(PipelineState(
            context: context, persisted: persisted, saveNeeded: saveNeeded, generationWord: stateFile.generationWord,
            generation: generation, unsaved: unsaved))
        self.sequenceFloor = sequenceFloor
        self.store = store
        self.stateFile = stateFile
        self.logger = logger
        self.hook = hook
        self.onRejection = onRejection
        self.predecessor = predecessor
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "spoor.writer"
        thread.start()
    }

    // MARK: Callers' side

    /// Hands an event on to the writer. Returns false when it is not recorded: the pipeline is shut down, or
    /// the user opted out.
    @inline(__always)
    func enqueue(_ event: consuming PendingEvent) -> Bool {
        enqueue(event, askingForDynamicProperties: false) { _, _ in false }
    }

    /// Hands an event on to the writer, with the dynamic super properties when a provider is set: `add` runs the
    /// provider (never under the lock) and puts what it returns into the event, or returns false to drop the event
    /// (its properties were invalid). Returns false when the event is not recorded.
    @inline(__always)
    func enqueue(
        _ event: consuming PendingEvent,
        addingDynamicProperties add: (_ provider: @Sendable () -> Properties, _ event: inout PendingEvent) -> Bool
    ) -> Bool {
        enqueue(event, askingForDynamicProperties: true, add)
    }

    @inline(__always)
    private func enqueue(
        _ event: consuming PendingEvent, askingForDynamicProperties asking: Bool,
        _ add: (_ provider: @Sendable () -> Properties, _ event: inout PendingEvent) -> Bool
    ) -> Bool {
        var event = event
        var asking = asking
        while true {
            let outcome = state.withLock { $0.enqueue(&event, askingForDynamicProperties: asking) }
            switch outcome {
            case .appended(let wakeWriter):
                if wakeWriter { wake.signal() }
                return true
            case .refused:
                return false
            case .stale:
                refreshSharedState()
            case .full(let wakeWriter):
                if wakeWriter { wake.signal() }
                firstBlockedProducer.fulfil(())
                space.wait()
            case .needsDynamicProperties(let provider):
                asking = false
                guard add(provider, &event) else { return false }
            }
        }
    }

    /// Sets (or removes) the dynamic super-properties provider later `track` calls run.
    func setDynamicSuperProperties(_ provider: (@Sendable () -> Properties)?) {
        state.withLock { $0.dynamicSuperProperties = provider }
    }

    /// Asks the writer to write and sync everything accepted so far; the promise is fulfilled when it has (with
    /// `stop`, when the writer has also closed the store and ended). Nobody has to wait for it.
    @discardableResult
    package func requestFlush(stop: Bool = false) -> Promise<Bool> {
        let done = Promise<Bool>()
        let wakeWriter = state.withLock { $0.requestFlush(done, stop: stop) }
        switch wakeWriter {
        case nil: done.fulfil(true)
        case true?: wake.signal()
        case false?: break
        }
        return done
    }

    /// Stops the pipeline (nothing is accepted afterwards) and returns what a successor over the same storage
    /// needs: the state as this pipeline leaves it, and a promise fulfilled once the writer has ended.
    func stop() -> (state: PersistedState, unsaved: [SharedChange], writerDone: Promise<Bool>) {
        let done = Promise<Bool>()
        let (wakeWriter, final, unsaved) = state.withLock { s in
            (s.requestFlush(done, stop: true), s.identity.persisted, s.unsaved)
        }
        switch wakeWriter {
        case nil: done.fulfil(true)
        case true?: wake.signal()
        case false?: break
        }
        return (final, unsaved, done)
    }

    /// Runs `intent` under the lock (on the shared state as another process left it, when one changed it), then
    /// wakes the writer if it asked for it.
    private func decide<R>(_ intent: (inout PipelineState) -> (R, wakeWriter: Bool)) -> R {
        refreshIfStale()
        let (result, wakeWriter) = state.withLock { intent(&$0) }
        if wakeWriter { wake.signal() }
        return result
    }

    // MARK: Intents (identity, super properties, consent, sessions)

    /// Carries out an identity intent; what it changed goes into the snapshot and the state file.
    @discardableResult
    func change(_ intent: TrackerIdentity.Intent) -> IdentityChange {
        decide { s in s.change(intent) }
    }

    /// Logs `loginID` in; whether a `$SignUp` was recorded (the login was new and the user has not opted out).
    func login(_ loginID: String, at time: EpochMilliseconds) -> Bool {
        decide { s in
            let (signedUp, wakeWriter) = s.login(loginID, at: time)
            return (signedUp, wakeWriter)
        }
    }

    /// The user opts out; with `discardingBuffer` the events waiting in memory are dropped. How many were.
    func optOut(discardingBuffer: Bool) -> Int {
        decide { s in
            let (discarded, wakeWriter) = s.optOut(discardingBuffer: discardingBuffer)
            return (discarded, wakeWriter)
        }
    }

    /// Counts an erasure of the stored data made here, for the other processes sharing the state to follow.
    func countErasure() {
        decide { s in ((), s.countErasure()) }
    }

    /// Ends the current session: the next event starts a new one.
    func endSession() {
        state.withLock { $0.endSession() }
    }

    /// Identity, super properties and consent as they are now (another process's change included).
    var identity: TrackerIdentity {
        refreshIfStale()
        return state.withLock { $0.identity }
    }

    // MARK: The shared state

    /// Calls `observer` (outside the lock) when another process's change turns consent around: `true` when the
    /// user opted out there.
    func observeConsent(
        _ observer: @escaping @Sendable (_ optedOut: Bool) -> Void, afterErasure resume: @escaping @Sendable () -> Void
    ) {
        consentObserver.withLock {
            $0.call = observer
            $0.resume = resume
        }
    }

    /// Reads the shared state again when another process changed it.
    func refreshIfStale() {
        if state.withLock({ $0.isStale }) { refreshSharedState() }
    }

    /// Whether the uploader may fetch or send a batch now: the user has not opted out (here or in another
    /// process), and no erasure another process made waits to be carried out here.
    var uploadPermission: Uploader.UploadPermission {
        refreshIfStale()
        return state.withLock { s in
            if s.identity.isOptedOut { return .optedOut }
            return s.eraseRequested || s.erasing ? .waitForErasure : .allowed
        }
    }

    /// Reads the state file (no lock: it is replaced whole) and takes it, this process's unsaved changes made
    /// again on it.
    private func refreshSharedState() {
        let generation = stateFile.generation
        guard let disk = stateFile.read() else {
            state.withLock { $0.skipUnreadable(generation: generation) }
            return
        }
        let (wakeWriter, consentChanged) = state.withLock { $0.install(disk, generation: generation) }
        after(wakeWriter: wakeWriter, consentChanged: consentChanged, onWriter: false)
    }

    /// Wakes the writer, and tells the consent observer of a change: on the caller's thread, so the caller's next
    /// step (a flush's upload) sees it; from the writer, on a thread of its own, since what the observer tells the
    /// lifecycle may record events, which may wait at the memory bound for the writer. The consent is read when the
    /// observer runs, so two changes in a row leave the latest.
    private func after(wakeWriter: Bool, consentChanged: Bool, onWriter: Bool) {
        if wakeWriter { wake.signal() }
        guard consentChanged else { return }
        if onWriter {
            Thread.detachNewThread { [self] in tellConsent() }
        } else {
            tellConsent()
        }
    }

    /// Tells the observer the consent as it is now (a change is installed once, so it is told once).
    private func tellConsent() {
        let observer = consentObserver.withLock { $0.call }
        observer?(state.withLock { $0.identity.isOptedOut })
    }

    /// Saves this process's changes: the state file's own content with each change made again on it, under the
    /// state lock; then takes what was written (other processes' changes included).
    private func saveState() {
        let (changes, copy) = state.withLock { $0.changesToSave }
        var fallback = copy
        fallback.nextSequence = fileFrontier
        do {
            let (saved, generation) = try stateFile.update(fallback: fallback) { disk in
                var identity = TrackerIdentity(disk)
                for change in changes { identity.replay(change) }
                let leased = disk.nextSequence
                disk = identity.persisted
                disk.nextSequence = leased
            }
            let (wakeWriter, consentChanged) = state.withLock { $0.saved(changes.count, state: saved, generation: generation) }
            after(wakeWriter: wakeWriter, consentChanged: consentChanged, onWriter: true)
        } catch {
            // The changes stay unsaved: the next save (the next change or flush) tries them again.
            logger.error("spoor: saving the state file failed", metadata: ["path": "\(stateFile.url.path)", "error": "\(error)"])
        }
    }

    /// Follows another process's erasure of the stored data: this process's own log goes.
    private func followErasure() {
        do {
            let erased = try store.erase(goneProcesses: false, following: state.withLock { $0.identity.deletions })
            logger.info("spoor: another process erased the stored data; erased this one's", metadata: [
                "records": "\(erased.records)", "batches": "\(erased.batches)",
            ])
        } catch {
            logger.error("spoor: erasing the stored events failed", metadata: ["error": "\(error)"])
        }
        state.withLock { $0.erasureFollowed() }
        // The uploader held back while the erasure waited (`uploadPermission`): it may go on now.
        consentObserver.withLock { $0.resume }?()
    }

    /// The state file's next sequence number when it must be written whole (it held nothing readable): past every
    /// number this process leased.
    private var fileFrontier: UInt64 { max(leases.frontier, sequenceFloor) }

    /// The leased sequence number of the event the queue numbered `local` (leasing a block when the last is used).
    private func leasedSequence(_ local: UInt64) -> UInt64 {
        while true {
            if let number = leases.number(local: local) { return number }
            lease()
        }
    }

    /// Leases the next block of sequence numbers from the state file (not counted as a change: nobody keeps the
    /// number). When the file cannot be written, numbering goes on past the block, and the next lease starts past it.
    private func lease() {
        let size = leases.nextLeaseSize
        let floor = max(leases.floor, sequenceFloor)
        var fallback = state.withLock { $0.changesToSave.fallback }
        fallback.nextSequence = fileFrontier
        var start: UInt64?
        do {
            _ = try stateFile.update(fallback: fallback, counted: false, waiting: leaseLockBusy ? .zero : PersistentStateFile.lockWait) {
                disk in
                start = max(disk.nextSequence, floor)
                disk.nextSequence = start! + size
            }
            leases.add(start!..<start! + size)
            leaseLockBusy = false
        } catch {
            if error.kind == .directoryInUse { leaseLockBusy = true }
            if let start, stateFile.keepsCounts {
                // The state file could not be written, but the lock was held and the lock file's frontier moved past
                // the block: every other process leases past it, so it is this process's.
                logger.error("spoor: the state file could not be written; the lease holds in the lock file", metadata: [
                    "path": "\(stateFile.url.path)", "error": "\(error)",
                ])
                leases.add(start..<start + size)
            } else {
                logger.error("spoor: leasing sequence numbers failed; numbering on a short stretch without a lease", metadata: [
                    "path": "\(stateFile.url.path)", "error": "\(error)",
                ])
                leases.continueUnleased(from: max(floor, stateFile.leasedFrontier))
            }
        }
    }

    /// Hands the unused rest of the lease back at a clean end, unless another process leased after it: a process
    /// that starts again numbers on from here.
    private func returnUnusedSequences() {
        let unused = leases.unused
        guard !unused.isEmpty else { return }
        var fallback = state.withLock { $0.changesToSave.fallback }
        fallback.nextSequence = fileFrontier
        _ = try? stateFile.update(fallback: fallback, counted: false) { disk in
            if disk.nextSequence == unused.upperBound { disk.nextSequence = unused.lowerBound }
        }
    }

    /// The snapshot events captured now get.
    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Events accepted, dropped after the stop, and dropped oldest first at the memory bound.
    var counts: (accepted: Int, droppedAfterShutdown: Int, droppedWhenBufferFull: Int) {
        state.withLock { ($0.queue.accepted, $0.queue.droppedAfterShutdown, $0.queue.droppedAtBound) }
    }

    // MARK: The writer

    private func run() {
        #if os(Linux)
        // Name the thread for tools (top -H, perf, /proc): Foundation does not on Linux.
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        if fd >= 0 {
            _ = "spoor.writer".withCString { write(fd, $0, strlen($0)) }
            close(fd)
        }
        #endif
        if let predecessor {
            // Callers buffer meanwhile (up to the memory bound); the released writer only finishes its last group.
            ReleasedTrackers.waitForWriter(predecessor, logger: logger)
        }
        var back: [PendingEvent] = []
        back.reserveCapacity(1024)
        var events: [StoredEvent] = []
        events.reserveCapacity(1024)
        var lingered = false

        while true {
            let (step, save, erase) = state.withLock { $0.nextWriterStep(lingered: lingered, swappingWith: &back) }
            if erase { followErasure() }
            lingered = false
            switch step {
            case .waitIdle:
                wake.wait()
            case .waitLinger:
                wake.wait(timeout: linger)
                lingered = true
            case .write(let generation, let sync, _, let release, let retired):
                // What the events in `back` may point to stays alive until they are written.
                defer { withExtendedLifetime(retired) {} }
                for _ in 0..<release { space.signal() }
                // Small groups keep the merged events and their encoding in cache, whatever the backlog.
                var index = 0
                while index < back.count {
                    let end = min(index + Self.groupSize, back.count)
                    for i in index..<end {
                        back[i].sequence = leasedSequence(back[i].sequence)
                        if let stored = materialize(back[i]) { events.append(stored) }
                    }
                    if logEvents { logJSON(events) }
                    store.append(&events)
                    events.removeAll(keepingCapacity: true)
                    index = end
                }
                back.removeAll(keepingCapacity: true)
                if let metrics { exportMetrics(metrics) }
                if save { saveState() }
                if sync {
                    do { try store.sync() } catch { logger.error("spoor: syncing the event store failed: \(error)") }
                    let ready = state.withLock { $0.completeFlush(through: generation) }
                    for waiter in ready { waiter.fulfil(true) }
                }
            case .exit(let waiters):
                if let metrics { exportMetrics(metrics) }
                if save { saveState() }
                returnUnusedSequences()
                if handover.closeUnlessHandedOver() { store.close() }
                for waiter in waiters { waiter.fulfil(true) }
                return
            }
        }
    }

    /// One JSON line per event (the `spoor decode` form), on the writer thread.
    private func logJSON(_ events: [StoredEvent]) {
        for stored in events {
            logger.debug("\(EventJSON.encode(stored.merged))")
        }
    }

    private func exportMetrics(_ metrics: TrackerMetrics) {
        let (accepted, afterShutdown, atBound) = counts
        metrics.export(TrackerMetrics.Totals(
            accepted: accepted, droppedByLog: store.droppedCount, droppedByHook: hookDropped.withLock { $0 },
            droppedAfterShutdown: afterShutdown, droppedWhenBufferFull: atBound))
    }

    /// Builds the record. The preset and super properties (the snapshot's base) are left for the store to add
    /// when none of the event's own keys is a base key (auto-track `$` keys such as `$screen_name` included), so
    /// the log store can splice in their encoding, made once per snapshot, instead of merging and encoding them
    /// again for every event.
    /// `nil` when ``Configuration/Tracking/beforeRecord`` dropped or rejected the event.
    private func materialize(_ pending: PendingEvent) -> StoredEvent? {
        let snapshot = pending.snapshot!.takeUnretainedValue()
        let sessionID = pending.session?.takeUnretainedValue().id
        let distinctID = pending.callerID
            ?? (pending.type == .trackSignup ? (snapshot.loginID ?? snapshot.distinctID) : snapshot.distinctID)
        // A per-call event carries the tracker's anonymous id (with the sequence number it names the event exactly)
        // and no login id but its own `$SignUp`'s: the tracker's login id belongs to the tracker's user, and a record
        // extending the context cannot leave out what the context holds.
        let perCall = pending.callerID != nil
        let loginID = perCall ? (pending.type == .trackSignup ? pending.callerID : nil) : snapshot.loginID
        let firstDay = snapshot.firstDay.contains(pending.time)
        if !pending.isProfile, hook == nil, loginID == snapshot.loginID, !collides(pending, with: snapshot) {
            // The common case: only the event's own fields; the snapshot supplies the rest (`StoredEvent.merged`,
            // and the log's context record). No id or lib string is copied per event.
            var properties = pending.properties
            if let dynamic = pending.dynamicProperties {
                properties = dynamic.merging(pending.properties) { $1 }
            }
            let event = Event(
                name: pending.name, type: pending.type, time: pending.time, sequence: pending.sequence,
                distinctID: distinctID == snapshot.distinctID ? "" : distinctID, anonymousID: "",
                lib: LibInfo(lib: "", libVersion: "", method: pending.method),
                properties: properties, sessionID: sessionID, originalID: pending.originalID)
            return StoredEvent(event: event, base: snapshot, firstDay: firstDay)
        }
        var event = Event(
            name: pending.name, type: pending.type, time: pending.time, sequence: pending.sequence,
            distinctID: distinctID, anonymousID: snapshot.anonymousID, loginID: loginID,
            lib: pending.method == .autoTrack ? snapshot.libAuto : snapshot.libCode,
            properties: pending.properties, sessionID: sessionID, originalID: pending.originalID)
        if pending.isProfile { return StoredEvent(event: event, base: nil, firstDay: false) }
        event.properties = StoredEvent.merge(
            base: snapshot, dynamic: pending.dynamicProperties, own: pending.properties, firstDay: firstDay)
        if let hook, !runHook(hook, on: &event, deviceID: snapshot.deviceID) { return nil }
        return StoredEvent(event: event, base: nil, firstDay: firstDay)
    }

    /// Runs ``Configuration/Tracking/beforeRecord`` on a merged event, then validates what it left. Returns whether the
    /// event is to be recorded; a drop or a rejection is counted and reported.
    private func runHook(
        _ hook: @Sendable (inout HookEvent) throws -> HookDecision, on event: inout Event, deviceID: String
    ) -> Bool {
        var seen = HookEvent(
            name: event.name, type: event.type, time: event.time, distinctID: event.distinctID, loginID: event.loginID,
            isAutoTracked: event.lib.method == .autoTrack, properties: event.properties)
        let decision: HookDecision
        do {
            decision = try hook(&seen)
        } catch {
            rejectFromHook(EventRejection(event: event.name, rule: .hookThrew), detail: "\(error)")
            return false
        }
        if decision == .drop {
            hookDropped.withLock { $0 += 1 }
            return false
        }
        switch PropertyValidator.check(seen.properties, event: event.name) {
        case .failure(let error):
            rejectFromHook(EventRejection(event: event.name, key: error.key, rule: .hookInvalid), detail: error.rule.rawValue)
            return false
        case .success(let findings):
            if findings.needsTruncation { PropertyValidator.truncateLongStrings(&seen.properties) }
        }
        seen.properties["$device_id"] = .string(deviceID)  // never overridable
        seen.properties["$event_session_id"] = nil  // it travels in its own field
        event.properties = seen.properties
        return true
    }

    private func rejectFromHook(_ error: EventRejection, detail: String) {
        hookRejections.withLock { $0[error.rule, default: 0] += 1 }
        metrics?.rejected(error.rule)
        logger.warning(
            "spoor: event rejected by the beforeRecord hook",
            metadata: ["event": "\(error.event)", "key": "\(error.key ?? "")", "rule": "\(error.rule)", "detail": "\(detail)"])
        onRejection?(error)
    }

    /// Whether some key of the event's own (call-site, auto-track, dynamic super) properties is also a key of the
    /// snapshot's base or one the merge sets last (`$is_first_day`, `$event_session_id`): only then does splicing
    /// the base's encoding differ from the merge. Keys without `$` can only meet super properties.
    @inline(__always)
    private func collides(_ pending: PendingEvent, with snapshot: Snapshot) -> Bool {
        guard pending.hasDollarKey || snapshot.hasSuperProperties else { return false }
        let keys = snapshot.collisionKeys
        for key in pending.properties.keys where keys.contains(key) { return true }
        if let dynamic = pending.dynamicProperties {
            for key in dynamic.keys where keys.contains(key) { return true }
        }
        return false
    }
}
