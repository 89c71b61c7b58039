import CSpoorAtomics
import SpoorModel
package import SpoorSystem

/// Everything the pipeline keeps under its one lock, by owner: identity and super properties
/// (``TrackerIdentity``), sessions (``SessionState``) and the writer's queue (``WriterQueue``), with the
/// snapshot events capture.
///
/// One lock, because an identity change and the events around it must enter the queue in one order (`login`
/// and its `$SignUp`, nothing between). The tracker calls the intents below through ``EventPipeline``; each
/// decides under the lock and returns what to do after it (wake the writer).
package struct PipelineState {
    package let context: PipelineContext
    package private(set) var identity: TrackerIdentity
    /// Identity and the merged preset and super properties; replaced whole when either changes.
    package private(set) var snapshot: Snapshot
    package private(set) var sessions: SessionState
    package private(set) var queue: WriterQueue
    /// ``Tracker/registerDynamicSuperProperties(_:)``'s provider. Kept here, under the lock `track` takes anyway,
    /// so a call without one pays nothing more; the provider itself never runs under the lock (see ``enqueue(_:askingForDynamicProperties:)``).
    package var dynamicSuperProperties: (@Sendable () -> Properties)?
    /// This process's changes the state file does not hold yet, oldest first (see ``SharedChange``).
    package private(set) var unsaved: [SharedChange] = []
    /// The shared state's change count (``PersistentStateFile/generation``), mapped from the state lock file; nil
    /// when there is none (it never changes then).
    private let generationWord: UnsafePointer<UInt64>?
    /// The change count `identity` reflects: another process changed the state when the word differs.
    package private(set) var seenGeneration: UInt64
    /// The erasures of stored data `identity` reflects; one more in the file is another process's, to follow.
    private var seenDeletions: UInt64
    /// Another process erased the stored data: the writer erases this one's too.
    package private(set) var eraseRequested = false
    /// The writer took the request and is erasing (until ``erasureFollowed()``).
    package private(set) var erasing = false

    package init(
        context: PipelineContext, persisted: PersistedState, saveNeeded: Bool = false, capacity: Int = 1024,
        generationWord: UnsafePointer<UInt64>? = nil, generation: UInt64 = 0, unsaved: [SharedChange] = []
    ) {
        self.context = context
        identity = TrackerIdentity(persisted)
        snapshot = Snapshot(state: persisted, context: context)
        sessions = SessionState(
            idleMilliseconds: context.sessionIdleMilliseconds, maxMilliseconds: context.sessionMaxMilliseconds)
        // Local numbers: the writer turns them into leased ones (`SequenceLeases`).
        queue = WriterQueue(
            nextSequence: 1, memoryLimit: context.memoryLimit,
            wakeThreshold: EventPipeline.wakeThreshold, capacity: capacity, dropsOldestWhenFull: context.dropsOldestWhenFull)
        self.generationWord = generationWord
        seenGeneration = generation
        seenDeletions = persisted.deletions
        self.unsaved = unsaved
        if saveNeeded || !unsaved.isEmpty { _ = queue.requestSave() }
    }

    /// What happened to an event handed to ``enqueue(_:askingForDynamicProperties:)``.
    package enum Enqueued: Equatable {
        case appended(wakeWriter: Bool)
        /// Nothing was done: another process changed the shared state. Read it (``install(_:generation:)``), then
        /// enqueue again.
        case stale
        /// The buffer is full: wait for space, then try again.
        case full(wakeWriter: Bool)
        /// Not recorded: the pipeline is stopping, or the user opted out.
        case refused
        /// Nothing was done: a dynamic super-properties provider is set. Run it outside the lock, put its
        /// (validated) properties into the event, and enqueue again without asking.
        case needsDynamicProperties(@Sendable () -> Properties)

        /// Alike when the case and its values are; any two requests for dynamic properties are alike.
        package static func == (lhs: Enqueued, rhs: Enqueued) -> Bool {
            switch (lhs, rhs) {
            case (.appended(let a), .appended(let b)), (.full(let a), .full(let b)): a == b
            case (.refused, .refused), (.needsDynamicProperties, .needsDynamicProperties), (.stale, .stale): true
            default: false
            }
        }
    }

    /// Stamps the event with its sequence number, snapshot and session and moves it into the queue (`event` is
    /// left empty), unless the pipeline stops, the user opted out or the buffer is full. With
    /// `askingForDynamicProperties` and a provider set, nothing is done and the provider is returned: the caller
    /// runs it without the lock and comes back (two lock takes only when a provider is set).
    @inline(__always)
    package mutating func enqueue(
        _ event: inout PendingEvent, askingForDynamicProperties: Bool = false, checkingSharedState: Bool = true
    ) -> Enqueued {
        if checkingSharedState, isStale { return .stale }
        // Asked before the queue admits the event: at the bound, admitting drops the oldest waiting event (with
        // `dropsOldestWhenFull`), which an event its dynamic properties then get rejected must not cost. A stopping
        // pipeline or an opted-out user refuses it at once, as the queue would, without running the provider.
        if askingForDynamicProperties, let provider = dynamicSuperProperties, !queue.stopping, !identity.isOptedOut {
            return .needsDynamicProperties(provider)
        }
        switch queue.admit(optedOut: identity.isOptedOut) {
        case .stopped, .declined: return .refused
        case .full(let wake): return .full(wakeWriter: wake)
        case .open: return .appended(wakeWriter: stampAndAppend(&event))
        }
    }

    @inline(__always)
    private mutating func stampAndAppend(_ event: inout PendingEvent) -> Bool {
        event.sequence = queue.takeSequence()
        event.snapshot = Unmanaged.passUnretained(snapshot)
        if context.enableSession, !event.isProfile, event.callerID == nil {
            let (session, ended) = sessions.session(at: event.time)
            if let ended { queue.retire(ended) }
            event.session = Unmanaged.passUnretained(session)
        }
        return queue.append(&event)
    }

    // MARK: Identity, super properties, consent

    /// Applies an identity intent: a new snapshot for later events and a save, as `change` asks; `made` is kept
    /// for the save when something is to be saved. Returns whether the writer must be woken.
    package mutating func apply(_ change: IdentityChange, made: SharedChange) -> Bool {
        if change.snapshot { replaceSnapshot() }
        guard change.save else { return false }
        unsaved.append(made)
        return queue.requestSave()
    }

    private mutating func replaceSnapshot() {
        queue.retire(snapshot)
        snapshot = Snapshot(state: identity.persisted, context: context)
    }

    /// Carries out an identity intent and applies what it changed. Returns the change and whether to wake the
    /// writer.
    package mutating func change(_ intent: TrackerIdentity.Intent) -> (change: IdentityChange, wakeWriter: Bool) {
        let change = identity.apply(intent)
        return (change, apply(change, made: .intent(intent)))
    }

    /// Logs `loginID` in at `time`; its `$SignUp` enters the queue in the same step, so no event slips between.
    /// Returns whether a `$SignUp` was recorded, and whether to wake the writer.
    package mutating func login(_ loginID: String, at time: EpochMilliseconds) -> (signedUp: Bool, wakeWriter: Bool) {
        let change = identity.login(loginID)
        let wake = apply(change, made: .login(loginID))
        guard let original = change.signUpOriginalID else { return (false, wake) }
        var signUp = PendingEvent(
            name: "$SignUp", type: .trackSignup, method: .code, time: time, properties: [:], dynamicProperties: nil,
            hasDollarKey: false, originalID: original)
        // Never refused as stale: the login was decided on the state as it is, and its `$SignUp` goes with it (a
        // save of this process's writer raises the change count a moment before it notes it seen).
        guard case .appended(let woken) = enqueue(&signUp, checkingSharedState: false) else { return (false, wake) }
        return (true, wake || woken)
    }

    /// Counts an erasure of the stored data made here, one past every erasure this state knows.
    package mutating func countErasure() -> Bool {
        change(.deleteStoredData(count: identity.deletions + 1)).wakeWriter
    }

    /// The user opts out; with `discardingBuffer` the events waiting in memory go too. Returns how many were
    /// discarded, and whether to wake the writer.
    package mutating func optOut(discardingBuffer: Bool) -> (discarded: Int, wakeWriter: Bool) {
        let (_, wake) = change(.optOut)
        return (discardingBuffer ? queue.discardBuffer() : 0, wake)
    }

    // MARK: The shared state

    /// Whether another process changed the shared state since `identity` last reflected it: one atomic load.
    @inline(__always)
    package var isStale: Bool {
        guard let generationWord else { return false }
        return spoor_atomic_load_u64(generationWord) != seenGeneration
    }

    /// Takes what the state file held at `generation` (read after that count was loaded, so it is at least as new),
    /// with this process's unsaved changes made again on it. An erasure by another process empties the memory
    /// buffer at once and has the writer erase the store. Returns whether the writer must be woken, and whether
    /// consent changed (the tracker then tells the uploader and the lifecycle).
    package mutating func install(_ disk: PersistedState, generation: UInt64) -> (wakeWriter: Bool, consentChanged: Bool) {
        // Only a newer state: two threads that both read the file may come back in either order.
        guard Int64(bitPattern: generation &- seenGeneration) > 0 else { return (false, false) }
        seenGeneration = generation
        let wasOptedOut = identity.isOptedOut
        var merged = TrackerIdentity(disk)
        for change in unsaved { merged.replay(change) }
        if merged != identity {
            let snapshotChanged = merged.anonymousID != identity.anonymousID || merged.loginID != identity.loginID
                || merged.persisted.superProperties != identity.persisted.superProperties
            identity = merged
            if snapshotChanged { replaceSnapshot() }
        }
        var wake = false
        if disk.deletions > seenDeletions {
            seenDeletions = disk.deletions
            _ = queue.discardBuffer()
            eraseRequested = true
            wake = queue.requestSave()
        }
        return (wake, wasOptedOut != identity.isOptedOut)
    }

    /// Notes that the state file could not be read at `generation`: the events keep the identity they have, and
    /// are not held up asking again until the next change.
    package mutating func skipUnreadable(generation: UInt64) {
        seenGeneration = generation
    }

    /// The changes to save, and the whole state to write should the file hold nothing readable.
    package var changesToSave: (changes: [SharedChange], fallback: PersistedState) { (unsaved, identity.persisted) }

    /// The writer saved the first `count` unsaved changes: the file held `state` at `generation` after them.
    package mutating func saved(_ count: Int, state: PersistedState, generation: UInt64) -> (wakeWriter: Bool, consentChanged: Bool) {
        let done = unsaved.prefix(min(count, unsaved.count))
        // This process's own erasures (done when they were made); a count past them in the file is another's.
        for case .intent(.deleteStoredData(let erasure)) in done { seenDeletions = max(seenDeletions, erasure) }
        unsaved.removeFirst(done.count)
        return install(state, generation: generation)
    }

    /// Whether another process's erasure is to be followed, clearing the request (it is then under way).
    private mutating func takeEraseRequest() -> Bool {
        defer { eraseRequested = false }
        if eraseRequested { erasing = true }
        return eraseRequested
    }

    /// The writer has followed the erasure it took.
    package mutating func erasureFollowed() {
        erasing = false
    }

    // MARK: Sessions

    /// Ends the current session: the next event starts a new one.
    package mutating func endSession() {
        if let ended = sessions.end() { queue.retire(ended) }
    }

    // MARK: The writer

    /// What the writer does next, whether the step saves the shared state, and whether it first erases the store
    /// (another process erased the stored data; taken in the same step as the events, all accepted after the
    /// erasure was seen, so they are written after it, not erased with it).
    package mutating func nextWriterStep(
        lingered: Bool, swappingWith back: inout [PendingEvent]
    ) -> (WriterQueue.Step, save: Bool, erase: Bool) {
        let step = queue.nextStep(lingered: lingered, swappingWith: &back)
        switch step {
        case .write(_, _, true, _, _): return (step, true, takeEraseRequest())
        case .write: return (step, false, takeEraseRequest())
        case .exit: return (step, !unsaved.isEmpty, takeEraseRequest())
        default: return (step, false, false)
        }
    }

    /// Asks for a flush (and with `stop`, the end); see ``WriterQueue/requestFlush(_:stop:)``.
    package mutating func requestFlush(_ done: Promise<Bool>, stop: Bool) -> Bool? {
        queue.requestFlush(done, stop: stop)
    }

    package mutating func completeFlush(through generation: UInt64) -> [Promise<Bool>] {
        queue.completeFlush(through: generation)
    }
}

/// What the pipeline needs to know that never changes while it runs.
package struct PipelineContext: Sendable {
    package var preset: Properties
    package var platform: String
    package var appVersion: String
    package var firstDay: Range<EpochMilliseconds>
    package var enableSession: Bool
    package var sessionIdleMilliseconds: Int64
    package var sessionMaxMilliseconds: Int64
    /// The most events held in memory before callers wait for the writer.
    package var memoryLimit: Int
    /// At the bound, drop the oldest waiting event rather than make the caller wait.
    package var dropsOldestWhenFull: Bool

    package init(
        preset: Properties,
        platform: String,
        appVersion: String,
        firstDay: Range<EpochMilliseconds>,
        enableSession: Bool,
        sessionIdleMilliseconds: Int64,
        sessionMaxMilliseconds: Int64,
        memoryLimit: Int,
        dropsOldestWhenFull: Bool = false
    ) {
        self.preset = preset
        self.platform = platform
        self.appVersion = appVersion
        self.firstDay = firstDay
        self.enableSession = enableSession
        self.sessionIdleMilliseconds = sessionIdleMilliseconds
        self.sessionMaxMilliseconds = sessionMaxMilliseconds
        self.memoryLimit = memoryLimit
        self.dropsOldestWhenFull = dropsOldestWhenFull
    }
}
