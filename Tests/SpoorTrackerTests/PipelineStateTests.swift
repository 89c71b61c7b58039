import SpoorModel
import SpoorSystem
import Testing

import SpoorTracker

/// The pipeline's state by owner, composed: what the tracker's intents do to identity, sessions and the queue,
/// in one step each.
@Suite("PipelineState")
struct PipelineStateTests {
    static func state(optedOut: Bool = false, memoryLimit: Int = 16, generationWord: UnsafePointer<UInt64>? = nil) -> PipelineState {
        let context = PipelineContext(
            preset: ["$os": "TestOS"], platform: "test", appVersion: "1.0", firstDay: 0..<86_400_000, enableSession: true,
            sessionIdleMilliseconds: 30_000, sessionMaxMilliseconds: 43_200_000, memoryLimit: memoryLimit)
        let persisted = PersistedState(
            deviceID: "device", anonymousID: "anonymous", loginID: nil, superProperties: [:], firstDay: "1970-01-01",
            firstLaunchPending: false, nextSequence: 1, optedOut: optedOut)
        return PipelineState(context: context, persisted: persisted, generationWord: generationWord)
    }

    static func event(_ name: String, at time: EpochMilliseconds = 1_000, type: EventType = .track) -> PendingEvent {
        PendingEvent(
            name: name, type: type, method: .code, time: time, properties: [:], dynamicProperties: nil,
            hasDollarKey: false, originalID: nil)
    }

    /// The events waiting, with their sequence numbers, distinct ids and session ids.
    static func waiting(_ state: PipelineState) -> [String] {
        state.queue.waiting.map { event in
            let snapshot = event.snapshot!.takeUnretainedValue()
            let session = event.session.map { $0.takeUnretainedValue().id == state.sessions.current?.id ? "current" : "old" }
            return "\(event.sequence) \(event.name) \(snapshot.distinctID) \(session ?? "-")"
        }
    }

    @Test func eventsAreStampedWithSequenceSnapshotAndSession() {
        var state = Self.state()
        var track = Self.event("A")
        #expect(state.enqueue(&track) == .appended(wakeWriter: false))
        var profile = Self.event("", type: .profileSet)
        _ = state.enqueue(&profile)
        #expect(Self.waiting(state) == ["1 A anonymous current", "2  anonymous -"])
    }

    /// At the bound of a queue that drops the oldest, an event that asks for dynamic properties gets the provider
    /// back before any event is dropped for it: if its properties are then rejected, it has cost nothing. The drop
    /// comes with the second call, which appends it.
    @Test func askingForDynamicPropertiesAtTheBoundDropsNothingYet() {
        let context = PipelineContext(
            preset: [:], platform: "test", appVersion: "1.0", firstDay: 0..<86_400_000, enableSession: false,
            sessionIdleMilliseconds: 30_000, sessionMaxMilliseconds: 43_200_000, memoryLimit: 2, dropsOldestWhenFull: true)
        let persisted = PersistedState(
            deviceID: "device", anonymousID: "anonymous", loginID: nil, superProperties: [:], firstDay: "1970-01-01",
            firstLaunchPending: false, nextSequence: 1, optedOut: false)
        var state = PipelineState(context: context, persisted: persisted)
        for name in ["A", "B"] {
            var event = Self.event(name)
            #expect(state.enqueue(&event) == .appended(wakeWriter: false))
        }
        state.dynamicSuperProperties = { ["tier": "gold"] }
        var event = Self.event("C")
        #expect(state.enqueue(&event, askingForDynamicProperties: true) == .needsDynamicProperties({ [:] }))
        #expect(state.queue.droppedAtBound == 0)
        #expect(state.queue.waiting.map(\.name) == ["A", "B"])
        #expect(state.enqueue(&event) == .appended(wakeWriter: false))
        #expect(state.queue.droppedAtBound == 1)
        #expect(state.queue.waiting.map(\.name) == ["B", "C"])
    }

    /// With a provider set, an event that asks for dynamic properties gets the provider back and nothing else
    /// happens (no sequence number, no buffer slot); the second call, not asking, appends it. Without a provider,
    /// or when not asking, one call appends.
    @Test func aProviderIsHandedOutNotRunUnderTheLock() {
        var state = Self.state()
        var plain = Self.event("Plain")
        #expect(state.enqueue(&plain, askingForDynamicProperties: true) == .appended(wakeWriter: false))
        state.dynamicSuperProperties = { ["tier": "gold"] }
        var event = Self.event("Dynamic")
        guard case .needsDynamicProperties(let provider) = state.enqueue(&event, askingForDynamicProperties: true) else {
            Issue.record("the provider was not handed out")
            return
        }
        #expect(state.queue.waiting.count == 1)
        #expect(state.queue.nextSequence == 2)
        event.dynamicProperties = provider()
        #expect(state.enqueue(&event, askingForDynamicProperties: false) == .appended(wakeWriter: false))
        #expect(Self.waiting(state) == ["1 Plain anonymous current", "2 Dynamic anonymous current"])
        #expect(state.queue.waiting.last?.dynamicProperties == ["tier": "gold"])
        var profile = Self.event("", type: .profileSet)
        #expect(state.enqueue(&profile) == .appended(wakeWriter: false))
    }

    @Test func aLoginAndItsSignUpEnterTogetherUnderTheNewIdentity() {
        var state = Self.state()
        var before = Self.event("Before")
        _ = state.enqueue(&before)
        let oldSnapshot = state.snapshot
        #expect(state.login("user-1", at: 2_000) == (signedUp: true, wakeWriter: false))
        #expect(state.snapshot !== oldSnapshot)
        #expect(state.queue.saveNeeded)
        #expect(Self.waiting(state) == ["1 Before anonymous current", "2 $SignUp user-1 current"])
        #expect(state.queue.waiting.last?.originalID == "anonymous")
        // Again: nothing changes, nothing is recorded.
        #expect(state.login("user-1", at: 3_000) == (signedUp: false, wakeWriter: false))
        #expect(state.queue.waiting.count == 2)
    }

    @Test func optedOutNothingIsRecordedNotEvenTheSignUp() {
        var state = Self.state(optedOut: true)
        var event = Self.event("A")
        #expect(state.enqueue(&event) == .refused)
        #expect(state.login("user-1", at: 2_000).signedUp == false)
        #expect(state.identity.loginID == "user-1")
        #expect(state.queue.accepted == 0)
        #expect(state.queue.droppedAfterShutdown == 0)
    }

    @Test func optingOutCanDiscardWhatWaitsInMemory() {
        var state = Self.state()
        for name in ["A", "B", "C"] {
            var event = Self.event(name)
            _ = state.enqueue(&event)
        }
        #expect(state.optOut(discardingBuffer: true).discarded == 3)
        #expect(state.identity.isOptedOut)
        #expect(state.queue.saveNeeded)
        var later = Self.event("D")
        #expect(state.enqueue(&later) == .refused)
    }

    @Test func anEndedSessionIsKeptForTheEventsThatPointToIt() {
        var state = Self.state()
        var first = Self.event("A", at: 1_000)
        _ = state.enqueue(&first)
        state.endSession()
        var second = Self.event("B", at: 1_001)
        _ = state.enqueue(&second)
        #expect(Self.waiting(state) == ["1 A anonymous old", "2 B anonymous current"])
        var back: [PendingEvent] = []
        guard case .write(_, _, _, _, let retired) = state.nextWriterStep(lingered: true, swappingWith: &back).0 else {
            Issue.record("a lingered batch is written")
            return
        }
        #expect(retired.count == 1)
        #expect(back.count == 2)
    }

    /// An event waits for the shared state another process changed; a login's `$SignUp` never does: it goes with
    /// the login (the state's change count may move between the tracker's look and the lock, when this process's
    /// own writer has just saved).
    @Test func aStaleStateHoldsEventsBackButNeverALoginsSignUp() {
        let word = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        defer { word.deallocate() }
        word.pointee = 0
        var state = Self.state(generationWord: word)
        var event = Self.event("A")
        #expect(state.enqueue(&event) == .appended(wakeWriter: false))
        word.pointee = 1
        var stale = Self.event("B")
        #expect(state.enqueue(&stale) == .stale)
        #expect(state.login("user-1", at: 2_000).signedUp)
        #expect(Self.waiting(state).map { $0.split(separator: " ")[1] } == ["A", "$SignUp"])
        var persisted = state.identity.persisted
        persisted.superProperties["theirs"] = StoredValue("x")
        _ = state.install(persisted, generation: 1)
        #expect(state.enqueue(&stale) == .appended(wakeWriter: false))
    }

    @Test func aChangeIsKeptUntilTheWriterSavedIt() {
        var state = Self.state()
        _ = state.change(.register(["plan": "pro"]))
        _ = state.login("user-1", at: 5)
        var back: [PendingEvent] = []
        let (step, save, _) = state.nextWriterStep(lingered: false, swappingWith: &back)
        guard case .write(_, _, true, _, _) = step, save else {
            Issue.record("a state change is saved at the next step, without lingering")
            return
        }
        let (changes, fallback) = state.changesToSave
        #expect(changes == [.intent(.register(["plan": "pro"])), .login("user-1")])
        #expect(fallback.superProperties == ["plan": StoredValue("pro")] && fallback.loginID == "user-1")
        // The file held another process's super property too: both hold after the save, and nothing is unsaved.
        var written = fallback
        written.superProperties["theirs"] = StoredValue("x")
        _ = state.saved(changes.count, state: written, generation: 1)
        #expect(state.unsaved.isEmpty)
        #expect(state.identity.superProperties == ["plan": "pro", "theirs": "x"])
        #expect(state.seenGeneration == 1)
    }

    /// Another process's erasure, found in the file by this process's own save, is followed: only this process's
    /// own erasures count as done.
    @Test func anErasureFoundByThisProcesssOwnSaveIsFollowed() {
        var state = Self.state()
        _ = state.change(.register(["a": 1]))
        let (changes, fallback) = state.changesToSave
        var written = fallback
        written.deletions = 1  // another process erased meanwhile
        _ = state.saved(changes.count, state: written, generation: 1)
        #expect(state.eraseRequested)
        // This process's own erasure, saved, asks for nothing more.
        var own = Self.state()
        _ = own.countErasure()
        let (ownChanges, ownState) = own.changesToSave
        _ = own.saved(ownChanges.count, state: ownState, generation: 1)
        #expect(!own.eraseRequested)
    }

    @Test func aChangeMadeWhileTheWriterSavesStaysForTheNextSave() {
        var state = Self.state()
        _ = state.change(.register(["a": 1]))
        let (changes, fallback) = state.changesToSave
        _ = state.change(.register(["b": 2]))
        _ = state.saved(changes.count, state: fallback, generation: 1)
        #expect(state.unsaved == [.intent(.register(["b": 2]))])
        // What was saved lacks the later change; the identity keeps it (made again on what was saved).
        #expect(state.identity.superProperties == ["a": 1, "b": 2])
    }
}
