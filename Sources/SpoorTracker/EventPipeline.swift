import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif
import Logging
package import SpoorModel
import SpoorLog
package import SpoorSystem
import SpoorWire

/// An event as the caller hands it on: captured and validated, not yet merged or encoded.
struct PendingEvent {
    var name: String
    var type: EventType
    var method: LibMethod
    var time: EpochMilliseconds
    /// Call-site (or auto-track) properties, already validated.
    var properties: Properties
    /// The dynamic super properties evaluated at `track` time, already validated.
    var dynamicProperties: Properties?
    /// Some key starts with `$`, so the never-overridable keys are re-applied after merging.
    var hasDollarKey: Bool
    var originalID: String?
    // Assigned under the pipeline lock, so they follow the order events enter the log. The snapshot and the
    // session are not retained: the pipeline keeps them alive until the writer has written the event
    // (`HotState.retired`), so a caller never touches a reference count the writer's core also touches.
    var sequence: UInt64 = 0
    var snapshot: Unmanaged<Snapshot>? = nil
    var session: Unmanaged<Session>? = nil

    var isProfile: Bool { type != .track && type != .trackSignup }

    /// An event holding nothing that is reference counted: what an event moved out of a variable leaves there.
    static var empty: PendingEvent {
        PendingEvent(
            name: "", type: .track, method: .unspecified, time: 0, properties: [:], dynamicProperties: nil,
            hasDollarKey: false, originalID: nil)
    }
}

/// Identity and the merged preset + super properties, immutable; replaced whole when either changes,
/// so `track` captures it with one retain.
final class Snapshot: Sendable {
    let distinctID: String
    package let anonymousID: String
    package let loginID: String?
    package let deviceID: String
    /// Preset properties, then super properties over them, then `$device_id` (never overridable).
    let base: Properties
    let libCode: LibInfo
    let libAuto: LibInfo
    package let firstDay: Range<EpochMilliseconds>
    /// Whether there are super properties, which the event's own keys might collide with.
    let hasSuperProperties: Bool
    /// The keys an event's own properties may not share for the event to extend the context (`collides`).
    let collisionKeys: CollisionKeys

    init(state: PersistedState, context: PipelineContext) {
        hasSuperProperties = !state.superProperties.isEmpty
        anonymousID = state.anonymousID
        loginID = state.loginID
        distinctID = state.loginID ?? state.anonymousID
        deviceID = state.deviceID
        // Room for the call-site properties, so the writer's copy does not grow while merging.
        var base = Properties(minimumCapacity: context.preset.count + state.superProperties.count + 32)
        for (key, value) in context.preset { base[key] = value }
        for (key, value) in state.superProperties { base[key] = value.value }
        base["$device_id"] = .string(state.deviceID)
        base["$event_session_id"] = nil
        self.base = base
        collisionKeys = CollisionKeys(Array(base.keys) + ["$is_first_day", "$event_session_id"])
        libCode = LibInfo(lib: context.platform, libVersion: PresetProperties.libVersion, method: .code, appVersion: context.appVersion)
        libAuto = LibInfo(lib: context.platform, libVersion: PresetProperties.libVersion, method: .autoTrack, appVersion: context.appVersion)
        firstDay = context.firstDay
    }
}

/// A session id, held by reference so that events can point to it without retaining it (see `PendingEvent`).
final class Session: Sendable {
    let id: String
    init(id: String) { self.id = id }
}

/// What the pipeline needs to know that never changes while it runs.
struct PipelineContext: Sendable {
    var preset: Properties
    var platform: String
    var appVersion: String
    package var firstDay: Range<EpochMilliseconds>
    var enableSession: Bool
    var sessionIdleMilliseconds: Int64
    var sessionMaxMilliseconds: Int64
    /// The most events held in memory before callers wait for the writer.
    var memoryLimit: Int
}

/// Everything guarded by the pipeline lock. Small, and touched only briefly.
struct HotState {
    enum WriterState { case busy, idle, lingering }

    let context: PipelineContext
    /// The front buffer: callers append, the writer swaps it for its empty back buffer.
    var buffer: [PendingEvent]
    var persisted: PersistedState
    var snapshot: Snapshot
    package var nextSequence: UInt64
    var accepted = 0
    var droppedAfterShutdown = 0
    var stateDirty = false
    var writerState = WriterState.busy
    var blockedProducers = 0
    var flushes = FlushGenerations<Bool>()
    var stopping = false
    var stopped = false
    /// Snapshots and sessions replaced since the writer last took the buffer: events waiting there may point to
    /// them (unretained), so they live until the writer has written those events.
    var retired: [AnyObject] = []
    // Sessions (docs/events.md, "Sessions").
    var session: Session? {
        willSet { if let session { retired.append(session) } }
    }
    var sessionStart: EpochMilliseconds = 0
    var sessionLast: EpochMilliseconds = 0

    init(context: PipelineContext, persisted: PersistedState, capacity: Int) {
        self.context = context
        self.persisted = persisted
        self.snapshot = Snapshot(state: persisted, context: context)
        self.nextSequence = persisted.nextSequence
        buffer = []
        buffer.reserveCapacity(capacity)
    }

    /// Rebuilds the snapshot after identity or super properties changed, and marks the state for saving.
    mutating func stateChanged() {
        retired.append(snapshot)
        snapshot = Snapshot(state: persisted, context: context)
        stateDirty = true
    }

    /// Stamps the event with its sequence number, snapshot and session, and moves it to the front buffer (`event`
    /// is left empty).
    /// Returns whether the caller must wake the writer.
    @inline(__always)
    mutating func accept(_ event: inout PendingEvent) -> Bool {
        event.sequence = nextSequence
        nextSequence &+= 1
        event.snapshot = Unmanaged.passUnretained(snapshot)
        if context.enableSession, !event.isProfile {
            event.session = Unmanaged.passUnretained(session(at: event.time))
        }
        // Moved, not copied: the caller's `event` is left empty (immortal empty values), so no reference count
        // is raised here and dropped again when the caller's copy goes away.
        var moved = PendingEvent.empty
        swap(&moved, &event)
        buffer.append(moved)
        accepted += 1
        switch writerState {
        case .idle:
            writerState = .busy
            return true
        case .lingering where buffer.count >= EventPipeline.wakeThreshold:
            writerState = .busy
            return true
        default:
            return false
        }
    }

    mutating func session(at time: EpochMilliseconds) -> Session {
        if let session, time - sessionLast < context.sessionIdleMilliseconds,
            time - sessionStart < context.sessionMaxMilliseconds
        {
            sessionLast = max(sessionLast, time)
            return session
        }
        let new = Session(id: UUID().uuidString)
        session = new
        sessionStart = time
        sessionLast = time
        return new
    }
}

/// The memory double buffer and its single writer: callers never wait for encoding or I/O, and one thread owns
/// the store, so events reach it in acceptance order without a lock around the writes.
///
/// Callers append captured events to the front buffer under a short lock; one writer thread swaps it for the
/// back buffer, merges properties, and hands the finished events to the ``EventStore``. No lock is held while
/// the writer merges, encodes or does I/O.
package final class EventPipeline: @unchecked Sendable {
    // @unchecked: `hot` is locked; the rest is immutable.
    let hot: Locked<HotState>
    // The writer thread parks on `wake` between groups of events, and callers blocked at the buffer bound park on
    // `space`: counting semaphores, so a signal given before the wait is never lost. The decision to wait or to
    // signal is always taken under `hot`.
    private let wake = DispatchSemaphore(value: 0)
    private let space = DispatchSemaphore(value: 0)
    package let store: any EventStore
    private let stateFile: PersistentStateFile
    private let logger: Logger
    /// Wake a lingering writer once this many events wait.
    static let wakeThreshold = 512
    /// The most events handed to the store at once.
    static let groupSize = 256
    /// How long the writer lets a small batch grow before writing it.
    private let linger: DispatchTimeInterval = .milliseconds(2)
    /// ``Configuration/beforeRecord``; `nil` keeps the splice fast path.
    private let hook: (@Sendable (inout HookEvent) throws -> HookDecision)?
    private let onRejection: (@Sendable (EventRejection) -> Void)?
    /// Events the hook rejected, by rule, and dropped.
    let hookRejections = Locked<[ValidationRule: Int]>([:])
    let hookDropped = Locked(0)
    /// Fulfilled the first time a caller waits at the buffer bound: what a test awaits to know the bound holds.
    let firstBlockedProducer = Promise<Void>()
    /// ``Configuration/logEvents``: each stored event goes to the logger as a JSON line, at debug level.
    private let logEvents: Bool
    let metrics: TrackerMetrics?

    init(
        context: PipelineContext, persisted: PersistedState, store: any EventStore, stateFile: PersistentStateFile, logger: Logger,
        hook: (@Sendable (inout HookEvent) throws -> HookDecision)? = nil,
        onRejection: (@Sendable (EventRejection) -> Void)? = nil,
        logEvents: Bool = false, metrics: TrackerMetrics? = nil
    ) {
        self.logEvents = logEvents
        self.metrics = metrics
        hot = Locked(HotState(context: context, persisted: persisted, capacity: 1024))
        self.store = store
        self.stateFile = stateFile
        self.logger = logger
        self.hook = hook
        self.onRejection = onRejection
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "spoor.writer"
        thread.start()
    }

    // MARK: Callers' side

    /// Hands an event on to the writer. Returns false when the pipeline is already shut down.
    @inline(__always)
    func enqueue(_ event: consuming PendingEvent) -> Bool {
        var event = event
        while true {
            enum Outcome { case appended(signal: Bool), full, stopped }
            let outcome = hot.withLock { s -> Outcome in
                if s.stopping {
                    s.droppedAfterShutdown += 1
                    return .stopped
                }
                // Consent: while opted out nothing is recorded (not counted: it is what the user asked for).
                if s.persisted.optedOut { return .stopped }
                if s.buffer.count >= s.context.memoryLimit {
                    s.blockedProducers += 1
                    let signal = s.writerState != .busy
                    s.writerState = .busy
                    if signal { wake.signal() }
                    return .full
                }
                return .appended(signal: s.accept(&event))
            }
            switch outcome {
            case .appended(let signal):
                if signal { wake.signal() }
                return true
            case .stopped:
                return false
            case .full:
                firstBlockedProducer.fulfil(())
                space.wait()
            }
        }
    }

    /// Asks the writer to write and sync everything accepted so far; the promise is fulfilled when it has (with
    /// `stop`, when the writer has also closed the store and ended). Nobody has to wait for it.
    @discardableResult
    package func requestFlush(stop: Bool = false) -> Promise<Bool> {
        let done = Promise<Bool>()
        let alreadyStopped = hot.withLock { s -> Bool in
            if s.stopped { return true }
            if stop { s.stopping = true }
            s.flushes.request(done, untilDrained: stop)
            if s.writerState != .busy {
                s.writerState = .busy
                wake.signal()
            }
            return false
        }
        if alreadyStopped { done.fulfil(true) }
        return done
    }

    /// Runs `body` under the pipeline lock (identity changes that must be ordered with events), then wakes the
    /// writer. `body` may call `accept` on the state to append an event.
    func withStateChange<R>(_ body: (inout HotState) -> R) -> R {
        let result = hot.withLock { s -> R in
            // `body` may append an event, which marks a waiting writer busy: look at the state before it.
            let writerWaiting = s.writerState != .busy
            let result = body(&s)
            if writerWaiting || s.writerState != .busy {
                s.writerState = .busy
                wake.signal()
            }
            return result
        }
        return result
    }

    /// Marks persisted state dirty and makes sure the writer saves it soon.
    func wakeForState() {
        hot.withLock { s in
            if s.writerState != .busy {
                s.writerState = .busy
                wake.signal()
            }
        }
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
        var back: [PendingEvent] = []
        back.reserveCapacity(1024)
        var events: [StoredEvent] = []
        events.reserveCapacity(1024)
        var lingered = false

        enum Step {
            case waitIdle, waitLinger
            case process(flushGeneration: UInt64, sync: Bool, save: PersistedState?, release: Int, retired: [AnyObject])
            case exit(save: PersistedState, waiters: [Promise<Bool>])
        }

        while true {
            let step = hot.withLock { s -> Step in
                let flushPending = s.flushes.isPending
                if s.buffer.isEmpty, !flushPending, !s.stateDirty, s.blockedProducers == 0 {
                    if s.stopping {
                        s.stopped = true
                        s.persisted.nextSequence = s.nextSequence
                        return .exit(save: s.persisted, waiters: s.flushes.drain())
                    }
                    s.writerState = .idle
                    return .waitIdle
                }
                if !lingered, !flushPending, !s.stopping, !s.stateDirty, s.blockedProducers == 0,
                    s.buffer.count < Self.wakeThreshold
                {
                    s.writerState = .lingering
                    return .waitLinger
                }
                swap(&s.buffer, &back)
                let retired = s.retired
                s.retired = []
                let release = s.blockedProducers
                s.blockedProducers = 0
                s.writerState = .busy
                var save: PersistedState?
                if s.stateDirty || (flushPending && s.persisted.nextSequence != s.nextSequence) {
                    s.persisted.nextSequence = s.nextSequence
                    save = s.persisted
                    s.stateDirty = false
                }
                return .process(flushGeneration: s.flushes.requested, sync: flushPending, save: save, release: release, retired: retired)
            }
            lingered = false
            switch step {
            case .waitIdle:
                wake.wait()
            case .waitLinger:
                _ = wake.wait(timeout: .now() + linger)
                lingered = true
            case .process(let generation, let sync, let save, let release, let retired):
                // What the events in `back` may point to stays alive until they are written.
                defer { withExtendedLifetime(retired) {} }
                for _ in 0..<release { space.signal() }
                // Small groups keep the merged events and their encoding in cache, whatever the backlog.
                var index = 0
                while index < back.count {
                    let end = min(index + Self.groupSize, back.count)
                    for i in index..<end {
                        if let stored = materialize(back[i]) { events.append(stored) }
                    }
                    if logEvents { logJSON(events) }
                    store.append(&events)
                    events.removeAll(keepingCapacity: true)
                    index = end
                }
                back.removeAll(keepingCapacity: true)
                if let metrics { exportMetrics(metrics) }
                if let save { saveState(save) }
                if sync {
                    do { try store.sync() } catch { logger.error("spoor: syncing the event store failed: \(error)") }
                    let ready = hot.withLock { s in s.flushes.complete(through: generation) }
                    for waiter in ready { waiter.fulfil(true) }
                }
            case .exit(let save, let waiters):
                if let metrics { exportMetrics(metrics) }
                saveState(save)
                store.close()
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
        let (accepted, afterShutdown) = hot.withLock { ($0.accepted, $0.droppedAfterShutdown) }
        metrics.export(TrackerMetrics.Totals(
            accepted: accepted, droppedByLog: store.droppedCount, droppedByHook: hookDropped.withLock { $0 },
            droppedAfterShutdown: afterShutdown))
    }

    private func saveState(_ state: PersistedState) {
        do { try stateFile.save(state) } catch {
            logger.error("spoor: saving the state file failed", metadata: ["path": "\(stateFile.url.path)", "error": "\(error)"])
        }
    }

    /// Builds the record. The preset and super properties (the snapshot's base) are left for the store to add
    /// when none of the event's own keys is a base key (auto-track `$` keys such as `$screen_name` included), so
    /// the log store can splice in their encoding, made once per snapshot, instead of merging and encoding them
    /// again for every event.
    /// `nil` when ``Configuration/beforeRecord`` dropped or rejected the event.
    private func materialize(_ pending: PendingEvent) -> StoredEvent? {
        let snapshot = pending.snapshot!.takeUnretainedValue()
        let sessionID = pending.session?.takeUnretainedValue().id
        let distinctID = pending.type == .trackSignup ? (snapshot.loginID ?? snapshot.distinctID) : snapshot.distinctID
        let firstDay = snapshot.firstDay.contains(pending.time)
        if !pending.isProfile, hook == nil, !collides(pending, with: snapshot) {
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
            distinctID: distinctID, anonymousID: snapshot.anonymousID, loginID: snapshot.loginID,
            lib: pending.method == .autoTrack ? snapshot.libAuto : snapshot.libCode,
            properties: pending.properties, sessionID: sessionID, originalID: pending.originalID)
        if pending.isProfile { return StoredEvent(event: event, base: nil, firstDay: false) }
        event.properties = StoredEvent.merge(
            base: snapshot, dynamic: pending.dynamicProperties, own: pending.properties, firstDay: firstDay)
        if let hook, !runHook(hook, on: &event, deviceID: snapshot.deviceID) { return nil }
        return StoredEvent(event: event, base: nil, firstDay: firstDay)
    }

    /// Runs ``Configuration/beforeRecord`` on a merged event, then validates what it left. Returns whether the
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

/// A finished record as the writer hands it to the store.
package struct StoredEvent {
    /// The record. When `base` is set it holds only the event's own fields: name, type, time, sequence, the lib
    /// method (lib's strings empty), its own properties (dynamic super properties and call site, none of which
    /// is a key of `base`), session and original id, and the distinct id only when it is not the snapshot's
    /// (else empty); the anonymous and login ids are left out. Otherwise it is complete.
    var event: Event
    /// What the event shares with others (ids, lib, preset and super properties), and `$is_first_day` over them.
    var base: Snapshot?
    /// `$is_first_day` for this event.
    package var firstDay: Bool

    /// A complete record, with nothing shared (what an in-memory store takes).
    package init(complete event: Event, firstDay: Bool) {
        self.init(event: event, base: nil, firstDay: firstDay)
    }

    init(event: Event, base: Snapshot?, firstDay: Bool) {
        self.event = event
        self.base = base
        self.firstDay = firstDay
    }

    /// The complete record: preset and super properties first, then dynamic super properties, then the call
    /// site's, then `$is_first_day`, and `$device_id` last, so that no event can override it.
    package var merged: Event {
        guard let base else { return event }
        var event = event
        if event.distinctID.isEmpty { event.distinctID = base.distinctID }
        event.anonymousID = base.anonymousID
        event.loginID = base.loginID
        event.lib = event.lib.method == .autoTrack ? base.libAuto : base.libCode
        event.properties = Self.merge(base: base, dynamic: nil, own: event.properties, firstDay: firstDay)
        return event
    }

    static func merge(base snapshot: Snapshot, dynamic: Properties?, own: Properties, firstDay: Bool) -> Properties {
        var properties = snapshot.base  // 1. preset, 2. super properties
        if let dynamic {  // 2. dynamic super properties
            for (key, value) in dynamic { properties[key] = value }
        }
        for (key, value) in own { properties[key] = value }  // 3. call site (4. auto-track)
        properties["$is_first_day"] = .bool(firstDay)  // 4.
        properties["$device_id"] = .string(snapshot.deviceID)  // 5. never overridable
        properties["$event_session_id"] = nil  // it travels in its own field
        return properties
    }
}

