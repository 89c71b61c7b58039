import SpoorModel
import SpoorWire
import Testing
import SpoorLog
import SpoorUpload

/// The upload rules alone: inputs in, actions out. No clock, no HTTP, no files: time is a value each input carries.
@Suite struct UploadStateMachineTests {
    typealias Machine = UploadStateMachine
    typealias Action = UploadStateMachine.Action

    static let start = UploadInstant(monotonic: .seconds(100), wall: 1_700_000_000_000)

    static func at(_ seconds: Int64) -> UploadInstant {
        UploadInstant(monotonic: start.monotonic + .seconds(seconds), wall: start.wall + seconds * 1000)
    }

    static func batch(_ n: UInt64, records: Int = 10) -> SealedBatch {
        SealedBatch(id: BatchID(high: 0x4000 | n, low: 0x8000_0000_0000_0000 | n), recordCount: records, codec: .none,
                    frameBytes: 100 * records, sealedAt: 0, isDurable: true)
    }

    static func machine(window: Int = 4, interval: Duration? = nil, policy: UploadPolicy = .always, token: String? = "t",
                        random: any RandomNumberGenerator & Sendable = SplitMix64(seed: 7)) -> Machine {
        Machine(settings: .init(maxBatchesInFlight: window, backoff: Backoff(), flushInterval: interval, policy: policy),
                token: token, random: random)
    }

    static let ok = Machine.Answer.response(status: 200, retryAfter: nil, duplicate: false, reason: "")
    static func status(_ code: Int, retryAfter: String? = nil, reason: String = "why") -> Machine.Answer {
        .response(status: code, retryAfter: retryAfter, duplicate: false, reason: reason)
    }

    static func sends(_ actions: [Action]) -> [(id: BatchID, retry: Int, token: String?)] {
        actions.compactMap { if case .send(let b, let retry, let token) = $0 { (b.id, retry, token) } else { nil } }
    }

    static func releases(_ actions: [Action]) -> [BatchID] {
        actions.compactMap { if case .release(let b) = $0 { b.id } else { nil } }
    }

    /// The timer the actions arm last: nil when they do not touch it, `.some(nil)` when they disarm it.
    static func timer(_ actions: [Action]) -> Duration?? {
        actions.compactMap { if case .scheduleTimer(let at) = $0 { at } else { nil } }.last
    }

    /// The answers the actions give waiting flushes (empty: none answered).
    static func flushAnswers(_ actions: [Action]) -> [PendingReason?] {
        var answers: [PendingReason?] = []
        for action in actions {
            if case .completeFlushes(_, let reason) = action { answers.append(reason) }
        }
        return answers
    }

    static func fetches(_ actions: [Action]) -> Int { actions.count { $0 == .fetchBatch } }

    /// Starts `m` with batches `batches` in the outbox (fed as fetch answers) and returns every action.
    static func started(_ m: inout Machine, with batches: [SealedBatch], at now: UploadInstant = start) -> [Action] {
        var actions = m.start(sendingLeftovers: true, at: now)
        for batch in batches {
            #expect(fetches(actions) == 1, "a fetch is asked for before \(batch.id)")
            actions = m.batchFetched(batch, at: now)
        }
        return actions
    }

    // MARK: - The window

    @Test func theWindowSendsUpToItsSizeAndFetchesNoMoreWhileFull() {
        var m = Self.machine(window: 3)
        var sent: [BatchID] = []
        var actions = m.start(sendingLeftovers: true, at: Self.start)
        #expect(actions == [.fetchBatch])
        for n in 1...3 {
            actions = m.batchFetched(Self.batch(UInt64(n)), at: Self.start)
            sent += Self.sends(actions).map(\.id)
            // Each fetched batch goes at once, and another is fetched while the window has room.
            #expect(Self.fetches(actions) == (n < 3 ? 1 : 0))
        }
        #expect(sent == (1...3).map { Self.batch($0).id })
        #expect(m.requestsInFlight == 3)
        // A trigger while full asks for nothing.
        #expect(Self.sends(m.trigger(at: Self.start)).isEmpty)
        #expect(Self.fetches(m.trigger(at: Self.start)) == 0)
        #expect(m.counters.state == .uploading)
        #expect(m.counters.requests == 3)
    }

    @Test func aWindowOfOneIsOneRequestAtATime() {
        var m = Self.machine(window: 1)
        let actions = Self.started(&m, with: [Self.batch(1)])
        #expect(Self.sends(actions).map(\.id) == [Self.batch(1).id])
        #expect(Self.fetches(actions) == 0)
        let next = m.answered(Self.batch(1).id, Self.ok, at: Self.start)
        #expect(Self.releases(next) == [Self.batch(1).id])
        // The next batch is fetched only once the first has left the outbox.
        #expect(Self.fetches(next) == 0)
        #expect(Self.fetches(m.released(Self.batch(1).id, at: Self.start)) == 1)
    }

    @Test func batchesLeaveTheOutboxInOrderWhateverOrderTheAnswersCome() {
        var m = Self.machine(window: 3)
        _ = Self.started(&m, with: [Self.batch(1), Self.batch(2), Self.batch(3)])
        // Later batches answered first are held.
        #expect(Self.releases(m.answered(Self.batch(3).id, Self.ok, at: Self.start)).isEmpty)
        #expect(Self.releases(m.answered(Self.batch(2).id, Self.ok, at: Self.start)).isEmpty)
        #expect(m.counters.deliveredBatches == 0)
        // A held batch still takes its place in the window: nothing more is fetched.
        #expect(Self.fetches(m.trigger(at: Self.start)) == 0)
        let released = m.answered(Self.batch(1).id, Self.ok, at: Self.start)
        #expect(Self.releases(released) == [1, 2, 3].map { Self.batch($0).id })
        for n: UInt64 in 1...3 { _ = m.released(Self.batch(n).id, at: Self.start) }
        #expect(m.counters.deliveredBatches == 3)
        #expect(m.counters.deliveredEvents == 30)
        #expect(m.counters.deliveredBytes == 3000)
    }

    @Test func aRefusedBatchIsSetAsideInItsTurn() {
        var m = Self.machine(window: 2)
        _ = Self.started(&m, with: [Self.batch(1), Self.batch(2)])
        #expect(!m.answered(Self.batch(2).id, Self.status(400, reason: "bad crc"), at: Self.start).contains {
            if case .setAside = $0 { true } else { false }
        })
        let actions = m.answered(Self.batch(1).id, Self.ok, at: Self.start)
        #expect(actions.contains(.release(Self.batch(1))))
        #expect(actions.contains(.setAside(Self.batch(2), status: 400, reason: "bad crc")))
        #expect(actions.firstIndex(of: .release(Self.batch(1)))! < actions.firstIndex(of: .setAside(Self.batch(2), status: 400, reason: "bad crc"))!)
        let done = m.setAside(Self.batch(2).id, dropped: 1, at: Self.start)
        #expect(done.contains { if case .persistCounters(let c) = $0 { c.rejectedBatches == 1 } else { false } })
        #expect(m.counters.rejectedEvents == 10)
        #expect(m.counters.rejectedDropped == 1)
        #expect(m.counters.lastError == "400 bad crc")
    }

    // MARK: - Failures

    @Test func backoffFollowsTheSeededJitterAndRetryCountsGrow() {
        var m = Self.machine(window: 1, random: SplitMix64(seed: 99))
        var expected = SplitMix64(seed: 99)
        var now = Self.start
        _ = Self.started(&m, with: [Self.batch(1)], at: now)
        for failures in 1...6 {
            let actions = m.answered(Self.batch(1).id, Self.status(503), at: now)
            let delay = Backoff().delay(afterFailures: failures, using: &expected)
            #expect(delay <= Backoff().ceiling(afterFailures: failures))
            #expect(Self.timer(actions) == .some(now.monotonic + delay), "failure \(failures)")
            #expect(m.counters.nextAttemptAt == now.wall + delay.milliseconds)
            #expect(m.counters.state == .backingOff)
            // A trigger does not cut the backoff short.
            #expect(Self.sends(m.trigger(at: now)).isEmpty)
            now = UploadInstant(monotonic: now.monotonic + delay, wall: now.wall + delay.milliseconds)
            let retried = Self.sends(m.timerFired(at: now))
            #expect(retried.map(\.retry) == [failures], "Spoor-Retry-Count")
            #expect(retried.map(\.id) == [Self.batch(1).id], "the same batch id")
        }
        // One warning for the failing spell, one notice for the recovery.
        let recovered = m.answered(Self.batch(1).id, Self.ok, at: now)
        #expect(recovered.contains(.notice(.recovered(status: 200))))
        #expect(m.counters.retries == 6)
        #expect(m.counters.nextAttemptAt == nil)
    }

    @Test func theFirstFailureOfASpellIsNoticedOnce() {
        var m = Self.machine(window: 1, random: FixedRandom(word: 0))
        _ = Self.started(&m, with: [Self.batch(1)])
        let first = m.answered(Self.batch(1).id, .failed(HTTPClientError(.timedOut, reason: "slow")), at: Self.start)
        #expect(first.contains { if case .notice(.failing) = $0 { true } else { false } })
        #expect(m.counters.timeouts == 1)
        _ = m.timerFired(at: Self.start)
        let second = m.answered(Self.batch(1).id, Self.status(500), at: Self.start)
        #expect(!second.contains { if case .notice(.failing) = $0 { true } else { false } })
    }

    @Test func afterAFailureOneBatchProbesBeforeTheWindowReopens() {
        var m = Self.machine(window: 3, random: FixedRandom(word: .max))
        _ = Self.started(&m, with: [Self.batch(1), Self.batch(2), Self.batch(3)])
        _ = m.answered(Self.batch(1).id, Self.status(500), at: Self.start)
        _ = m.answered(Self.batch(2).id, Self.status(500), at: Self.start)
        _ = m.answered(Self.batch(3).id, Self.status(500), at: Self.start)
        // Three failures: the third ceiling, 4 s.
        let later = Self.at(4)
        let probe = Self.sends(m.timerFired(at: later))
        #expect(probe.map(\.id) == [Self.batch(1).id])
        let reopened = Self.sends(m.answered(Self.batch(1).id, Self.ok, at: later))
        #expect(reopened.map(\.id) == [Self.batch(2).id, Self.batch(3).id])
    }

    @Test func onlyAnAttemptMadeAfterAFailureEndsTheBackoff() {
        var m = Self.machine(window: 2, random: FixedRandom(word: .max))
        _ = Self.started(&m, with: [Self.batch(1), Self.batch(2)])
        _ = m.answered(Self.batch(1).id, Self.status(500), at: Self.start)
        // Batch 2 was on the wire before the failure: its success neither ends the backoff nor sends batch 1.
        let early = m.answered(Self.batch(2).id, Self.ok, at: Self.start)
        #expect(Self.sends(early).isEmpty)
        #expect(!early.contains(.notice(.recovered(status: 200))))
        #expect(m.counters.state == .backingOff)
        // The retry after the backoff does.
        _ = m.timerFired(at: Self.at(1))
        let recovered = m.answered(Self.batch(1).id, Self.ok, at: Self.at(1))
        #expect(recovered.contains(.notice(.recovered(status: 200))))
        #expect(Self.releases(recovered) == [Self.batch(1).id, Self.batch(2).id])
    }

    @Test func retryAfterPausesEveryoneEvenAFlushThenResumes() {
        var m = Self.machine(window: 2, random: FixedRandom(word: 0))
        _ = Self.started(&m, with: [Self.batch(1), Self.batch(2)])
        let actions = m.answered(Self.batch(1).id, Self.status(429, retryAfter: "120"), at: Self.start)
        #expect(actions.contains(.notice(.pausedByServer(until: Self.start.wall + 120_000))) == false)  // only once settled
        #expect(Self.timer(actions) == .some(Self.start.monotonic + .seconds(120)))
        #expect(m.counters.serverPauses == 1)
        #expect(m.counters.nextAttemptAt == Self.start.wall + 120_000)
        // The other batch's success is kept (held behind the first), and nothing is sent during the pause.
        let settled = m.answered(Self.batch(2).id, Self.ok, at: Self.start)
        #expect(settled.contains(.notice(.pausedByServer(until: Self.start.wall + 120_000))))
        #expect(m.counters.state == .pausedByServer)
        let (generation, flushed) = m.requestFlush(at: Self.at(60))
        #expect(generation == 1)
        #expect(Self.sends(flushed).isEmpty)
        #expect(Self.flushAnswers(flushed) == [.pausedByServer(until: Self.start.wall + 120_000)])
        #expect(Self.sends(m.timerFired(at: Self.at(120))).map(\.retry) == [1])
    }

    @Test func retryAfterIsCappedAndNeverShorterThanTheBackoff() {
        var capped = Self.machine(window: 1, random: FixedRandom(word: 0))
        _ = Self.started(&capped, with: [Self.batch(1)])
        let long = capped.answered(Self.batch(1).id, Self.status(503, retryAfter: "86400"), at: Self.start)
        #expect(Self.timer(long) == .some(Self.start.monotonic + RetryAfter.maximum))
        // `Retry-After: 0` with the top of the jitter range waits the backoff (1 s for a first failure).
        var zero = Self.machine(window: 1, random: FixedRandom(word: .max))
        _ = Self.started(&zero, with: [Self.batch(1)])
        let short = zero.answered(Self.batch(1).id, Self.status(503, retryAfter: "0"), at: Self.start)
        #expect(Self.timer(short) == .some(Self.start.monotonic + .seconds(1)))
        // A header that is neither form is a plain failure with backoff.
        var garbage = Self.machine(window: 1, random: FixedRandom(word: .max))
        _ = Self.started(&garbage, with: [Self.batch(1)])
        _ = garbage.answered(Self.batch(1).id, Self.status(503, retryAfter: "soon"), at: Self.start)
        #expect(garbage.counters.state == .backingOff)
        #expect(garbage.counters.serverPauses == 0)
    }

    @Test func unauthorizedPausesWithoutATimerUntilTheTokenIsReplaced() {
        var m = Self.machine(window: 1, interval: .seconds(15))
        _ = Self.started(&m, with: [Self.batch(1)])
        let paused = m.answered(Self.batch(1).id, Self.status(401, reason: "bad token"), at: Self.start)
        #expect(paused.contains(.notice(.authorizationRefused(status: 401, reason: "bad token"))))
        #expect(Self.timer(paused) == .some(nil))
        #expect(m.counters.state == .pausedForAuthorization)
        #expect(m.counters.authorizationPauses == 1)
        for _ in 0..<3 { #expect(Self.sends(m.trigger(at: Self.at(7200))).isEmpty) }
        let resumed = m.setToken("fresh", at: Self.at(7200))
        #expect(resumed.contains(.notice(.resumedByToken)))
        #expect(Self.sends(resumed).map(\.token) == ["fresh"])
        // 401 is not a failed attempt: no retry count.
        #expect(Self.sends(resumed).map(\.retry) == [0])
    }

    @Test func aFlushEndsTheAuthorizationPauseAndCutsTheBackoffForOneAttempt() {
        var m = Self.machine(window: 2, random: FixedRandom(word: .max))
        _ = Self.started(&m, with: [Self.batch(1)])
        _ = m.answered(Self.batch(1).id, Self.status(403), at: Self.start)
        var (_, actions) = m.requestFlush(at: Self.start)
        #expect(actions.contains(.notice(.resumedByFlush)))
        #expect(Self.sends(actions).count == 1)
        // It fails: the flush is answered with the backoff, after one attempt only.
        actions = m.answered(Self.batch(1).id, Self.status(500, reason: "oops"), at: Self.start)
        #expect(Self.flushAnswers(actions).isEmpty, "the window's fetch is still out")
        actions = m.batchFetched(nil, at: Self.start)
        guard case .some(.some(.backingOff(_, let error))) = Self.flushAnswers(actions).last else {
            Issue.record("expected backingOff, got \(actions)")
            return
        }
        #expect(error == "500 oops")
        // A second flush is one more attempt, whatever the backoff says.
        (_, actions) = m.requestFlush(at: Self.start)
        #expect(Self.sends(actions).map(\.retry) == [1])
    }

    @Test func payloadTooLargeSplitsAndASingleEventIsSetAside() {
        var m = Self.machine(window: 2)
        _ = Self.started(&m, with: [Self.batch(1, records: 4)])
        let split = m.answered(Self.batch(1, records: 4).id, Self.status(413, reason: "too big"), at: Self.start)
        #expect(split.contains(.split(Self.batch(1, records: 4), reason: "too big")))
        let halves = [Self.batch(11, records: 2), Self.batch(12, records: 2)]
        let sent = m.split(Self.batch(1, records: 4).id, into: halves, at: Self.start)
        #expect(Self.sends(sent).map(\.id) == halves.map(\.id))
        #expect(m.counters.splits == 1)
        // A batch of one event still too large goes to the rejected area.
        var single = Self.machine(window: 1)
        _ = Self.started(&single, with: [Self.batch(2, records: 1)])
        let refused = single.answered(Self.batch(2, records: 1).id, Self.status(413, reason: "too big"), at: Self.start)
        #expect(refused.contains(.setAside(Self.batch(2, records: 1), status: 413, reason: "a single event is too large: too big")))
        // So does one the driver finds cannot be split.
        var unsplittable = Self.machine(window: 1)
        _ = Self.started(&unsplittable, with: [Self.batch(3)])
        _ = unsplittable.answered(Self.batch(3).id, Self.status(413), at: Self.start)
        let aside = unsplittable.splitImpossible(Self.batch(3).id, reason: "cannot", at: Self.start)
        #expect(aside.contains(.setAside(Self.batch(3), status: 413, reason: "cannot")))
    }

    // MARK: - Consent, policy, interval

    @Test func withoutConsentNothingIsSealedOrSent() {
        var m = Self.machine(window: 2)
        _ = m.start(sendingLeftovers: false, at: Self.start)
        _ = m.setConsent(granted: false, at: Self.start)
        #expect(m.trigger(at: Self.start).contains(.fetchBatch) == false)
        let (_, flushed) = m.requestFlush(at: Self.start)
        #expect(Self.flushAnswers(flushed) == [.optedOut])
        #expect(m.counters.state == .pausedForConsent)
        #expect(m.setConsent(granted: true, at: Self.start).contains(.fetchBatch))
    }

    @Test func thePolicySeesTheNetworkAndItsReturnRetriesAtOnce() {
        var m = Self.machine(window: 2, policy: .unmeteredOnly, random: FixedRandom(word: .max))
        _ = m.start(sendingLeftovers: false, at: Self.start)
        let held = m.networkChanged(NetworkStatus(isAvailable: true, isExpensive: true), at: Self.start)
        #expect(held.contains(.notice(.waitingForPolicy("unmetered-only"))) || m.counters.state == .waitingForPolicy)
        let (_, flushed) = m.requestFlush(at: Self.start)
        #expect(Self.flushAnswers(flushed) == [.policy("unmetered-only")])
        // Unmetered again: the machine looks at once.
        #expect(m.networkChanged(NetworkStatus(isAvailable: true), at: Self.start).contains(.fetchBatch))
        // A failure, then the network goes and comes back: the backoff is cut short.
        _ = m.batchFetched(Self.batch(1), at: Self.start)
        _ = m.answered(Self.batch(1).id, Self.status(500), at: Self.start)
        _ = m.networkChanged(NetworkStatus(isAvailable: false), at: Self.start)
        #expect(Self.sends(m.networkChanged(NetworkStatus(isAvailable: true), at: Self.start)).map(\.retry) == [1])
    }

    @Test func theIntervalIsArmedOnlyWhileActive() {
        var m = Self.machine(interval: .seconds(15))
        let started = m.start(sendingLeftovers: false, at: Self.start)
        #expect(Self.timer(started) == .some(Self.start.monotonic + .seconds(15)))
        #expect(Self.timer(m.setIntervalActive(false, at: Self.start)) == .some(nil))
        let fired = m.setIntervalActive(true, at: Self.at(1))
        #expect(fired.contains(.fetchBatch))
        #expect(Self.timer(m.batchFetched(nil, at: Self.at(1))) == .some(Self.at(1).monotonic + .seconds(15)))
        #expect(m.timerFired(at: Self.at(16)).contains(.fetchBatch))
    }

    // MARK: - Flushes and stop

    /// A flush that comes while its batch is already on the wire, with no backoff to cut short, gets no second
    /// attempt when that one fails: the failure's backoff stands, and the flush is answered with it. (Seen on a
    /// loaded machine: the interval sent the batch, a flush came during the stall, and the batch went twice.)
    @Test func aFlushDuringAnAttemptDoesNotRetryItsFailure() {
        var m = Self.machine(window: 1)
        _ = Self.started(&m, with: [Self.batch(1)])
        var (_, actions) = m.requestFlush(at: Self.at(1))
        #expect(Self.sends(actions).isEmpty)
        actions = m.answered(Self.batch(1).id, .failed(HTTPClientError(.timedOut, reason: "stalled")), at: Self.at(2))
        #expect(Self.sends(actions).isEmpty, "\(actions)")
        actions += m.batchFetched(nil, at: Self.at(2))
        guard case .backingOff? = Self.flushAnswers(actions).last ?? nil else {
            Issue.record("the flush is answered with the backoff: \(actions)")
            return
        }
    }

    @Test func aFlushIsAnsweredOnlyWhenNothingIsInProgress() {
        var m = Self.machine(window: 2)
        _ = m.start(sendingLeftovers: false, at: Self.start)
        var (generation, actions) = m.requestFlush(at: Self.start)
        #expect(generation == 1)
        #expect(actions == [.fetchBatch])
        actions = m.batchFetched(Self.batch(1), at: Self.start)
        #expect(Self.flushAnswers(actions).isEmpty)
        // A second flush while the first is in progress: both answered together, once everything has left.
        (generation, actions) = m.requestFlush(at: Self.start)
        #expect(generation == 2)
        actions = m.answered(Self.batch(1).id, Self.ok, at: Self.start)
        #expect(Self.flushAnswers(actions).isEmpty)
        // The fetch that was out when the second flush came does not cover it: the log is asked again (records
        // may have come in between).
        actions = m.batchFetched(nil, at: Self.start)
        #expect(actions.contains(.fetchBatch))
        actions = m.released(Self.batch(1).id, at: Self.start)
        #expect(Self.flushAnswers(actions).isEmpty)
        actions = m.batchFetched(nil, at: Self.start)
        #expect(actions.contains(.completeFlushes(through: 2, nil)))
        #expect(m.counters.state == .idle)
    }

    @Test func stopAbandonsRequestsAnswersEveryoneAndIgnoresLateAnswers() {
        var m = Self.machine(window: 2, interval: .seconds(15))
        _ = Self.started(&m, with: [Self.batch(1)])
        _ = m.requestFlush(at: Self.start)
        let stopped = m.stop(at: Self.start)
        #expect(stopped.first == .cancelRequests)
        #expect(stopped.contains(.completeFlushes(through: .max, .stopped)))
        #expect(stopped.contains(.completePasses(through: .max)))
        #expect(stopped.contains { if case .persistCounters(let c) = $0 { c.state == .stopped } else { false } })
        #expect(m.answered(Self.batch(1).id, Self.ok, at: Self.start).isEmpty)
        #expect(m.trigger(at: Self.start).isEmpty)
        #expect(m.requestFlush(at: Self.start).generation == nil)
        #expect(m.stop(at: Self.start).isEmpty)
    }

    @Test func aClosedLogStopsAndAStorageErrorWaitsForTheNextAsk() {
        var m = Self.machine(window: 1)
        _ = m.start(sendingLeftovers: true, at: Self.start)
        let (_, _) = m.requestFlush(at: Self.start)
        let failed = m.storageFailed(nil, reason: "disk", closed: false, at: Self.start)
        #expect(Self.flushAnswers(failed) == [.storage("disk")])
        #expect(!failed.contains(.fetchBatch))
        #expect(m.trigger(at: Self.start).contains(.fetchBatch))
        let closed = m.storageFailed(nil, reason: "closed", closed: true, at: Self.start)
        #expect(closed.contains(.completeFlushes(through: .max, .stopped)))
        #expect(m.counters.state == .stopped)
    }

    @Test func countersFromAnEarlierLaunchKeepTheirTotalsNotTheirState() {
        var saved = UploadCounters()
        saved.deliveredBatches = 7
        saved.state = .pausedForAuthorization
        saved.nextAttemptAt = 5
        let m = Machine(settings: .init(), token: nil, random: FixedRandom(word: 0), counters: saved)
        #expect(m.counters.deliveredBatches == 7)
        #expect(m.counters.state == .idle)
        #expect(m.counters.nextAttemptAt == nil)
    }
}
