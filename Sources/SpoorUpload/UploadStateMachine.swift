package import SpoorWire
package import SpoorLog

/// A moment as the upload rules are told it: monotonic time for deadlines, wall time for what is reported.
package struct UploadInstant: Sendable, Hashable {
    /// Monotonic time since an arbitrary origin (`SpoorClock.now()`).
    package var monotonic: Duration
    /// Milliseconds since the epoch (`SpoorClock.wallMilliseconds()`).
    package var wall: Int64

    package init(monotonic: Duration, wall: Int64) {
        self.monotonic = monotonic
        self.wall = wall
    }
}

/// Every rule of the uploader, and nothing else: a value that takes what happened (a trigger, a flush, an answer,
/// a timer, a change of consent, token, policy or network) and returns what to do (seal, send, release, set aside,
/// split, arm the timer, answer flushes, save the counters). It does no I/O, takes no lock and reads no clock:
/// time comes in with each input, randomness from the generator it was given. ``Uploader`` is the driver that
/// feeds it and performs its actions (docs/upload.md lists the rules).
///
/// The window: at most ``Settings/maxBatchesInFlight`` of the outbox's oldest batches are held at once, and each
/// may be on the wire. Batches leave the outbox in outbox order: a batch delivered (or refused) while an older
/// one is still out waits for it, so the outbox always holds a run of consecutive batches. After a failed
/// answer the next attempts go one batch at a time (a probe) until one succeeds.
package struct UploadStateMachine {
    /// The configuration the rules read.
    package struct Settings: Sendable {
        /// The most batches held (sent and not yet out of the outbox) at once; at least 1.
        package var maxBatchesInFlight: Int
        /// Delays between failed attempts.
        package var backoff: Backoff
        /// While events wait, look again at least this often; nil for triggers only.
        package var flushInterval: Duration?
        /// When uploads may run.
        package var policy: UploadPolicy

        package init(maxBatchesInFlight: Int = 4, backoff: Backoff = Backoff(), flushInterval: Duration? = nil,
                     policy: UploadPolicy = .always) {
            self.maxBatchesInFlight = max(1, maxBatchesInFlight)
            self.backoff = backoff
            self.flushInterval = flushInterval
            self.policy = policy
        }
    }

    /// What came back for a request, as the driver read it.
    package enum Answer: Sendable, Hashable {
        /// An HTTP answer: its status, its `Retry-After` header, whether a 2xx body says `"duplicate": true`, and
        /// the collector's reason (from its JSON body).
        case response(status: Int, retryAfter: String?, duplicate: Bool, reason: String)
        /// No answer: a network error, a timeout or a cancelled request.
        case failed(HTTPClientError)
    }

    /// A change worth one log line (each state change is logged once, not each retry).
    package enum Notice: Sendable, Hashable {
        /// Uploads started failing: the first failed attempt after a success.
        case failing(batch: BatchID, error: String, status: Int?)
        /// An attempt succeeded after failures.
        case recovered(status: Int)
        /// A 401 or 403 paused uploads.
        case authorizationRefused(status: Int, reason: String)
        /// A new token ended the pause for authorization.
        case resumedByToken
        /// A flush ended the pause for authorization.
        case resumedByFlush
        /// Uploads wait for the upload policy.
        case waitingForPolicy(String)
        /// The collector asked for a pause (`Retry-After`) until this wall time.
        case pausedByServer(until: Int64)
    }

    /// What the driver must do.
    package enum Action: Sendable, Hashable {
        /// Hand over the oldest outbox batch not yet held (``heldBatchIDs``), else seal one from the log; answer
        /// with ``batchFetched(_:at:)`` or ``storageFailed(_:reason:closed:at:)``.
        case fetchBatch
        /// POST the batch with these headers' values; answer with ``answered(_:_:at:)`` (or ``batchVanished(_:at:)``
        /// when its frame is gone).
        case send(SealedBatch, retry: Int, token: String?)
        /// Remove the delivered batch from the outbox; answer with ``released(_:at:)``.
        case release(SealedBatch)
        /// Move the refused batch to the rejected area and out of the outbox; answer with ``setAside(_:dropped:at:)``.
        case setAside(SealedBatch, status: Int, reason: String)
        /// Replace the batch by its two halves in the outbox (`reason`: the collector's); answer with
        /// ``split(_:into:at:)`` or ``splitImpossible(_:reason:at:)``.
        case split(SealedBatch, reason: String)
        /// Wake the machine (``timerFired(at:)``) at this monotonic time, replacing the timer armed before; nil:
        /// no timer.
        case scheduleTimer(at: Duration?)
        /// Abandon every request in flight.
        case cancelRequests
        /// Answer the flushes up to this generation (``requestFlush(at:)``) with why events still wait (nil: none).
        case completeFlushes(through: UInt64, PendingReason?)
        /// Answer the pass waiters up to this generation (``requestPass(at:)``).
        case completePasses(through: UInt64)
        /// Save the counters (`upload.json`).
        case persistCounters(UploadCounters)
        /// Tell the host what came of a request (``UploadConfiguration/onAttempt``).
        case report(UploadAttempt)
        /// Log a change of state.
        case notice(Notice)
    }

    private enum Phase: Hashable {
        /// Not sent yet, or to be sent again.
        case waiting
        case sending
        /// A 413: being replaced by halves.
        case splitting
        /// Delivered; leaves the outbox once every older batch has.
        case delivered(duplicate: Bool)
        /// Refused; goes to the rejected area once every older batch has left.
        case refused(status: Int, reason: String)
        /// Release or set-aside asked of the driver (with the refusal, for a set-aside).
        case leaving(duplicate: Bool, refusedStatus: Int?, reason: String)
    }

    private struct Entry {
        var batch: SealedBatch
        var phase: Phase
        /// ``failureCount`` when the batch was last sent: only an attempt made after the latest failure ends a
        /// backoff (a request already on the wire when another failed says nothing new about the collector).
        var sentAfterFailure = 0
    }

    private let settings: Settings
    private var random: any RandomNumberGenerator & Sendable

    /// What has been counted so far.
    package private(set) var counters: UploadCounters
    /// Calls of ``trigger(at:)`` (and of ``requestPass(at:)``, which triggers).
    package private(set) var triggers = 0
    private var token: String?
    private var network = NetworkStatus.unknown
    private var started = false
    private var stopping = false
    private var consentWithheld = false
    private var intervalPaused = false

    /// Consecutive failed attempts.
    private var failures = 0
    /// Failed attempts ever, to tell requests sent before the latest failure from those sent after it.
    private var failureCount = 0
    /// Backoff: no automatic attempt before this (monotonic).
    private var nextAttempt: Duration?
    /// `Retry-After`: no attempt at all before this (monotonic), and its wall time.
    private var pausedUntil: (monotonic: Duration, wall: Int64)?
    /// 401 or 403: the status, until a token, a flush or a new launch.
    private var authorizationPaused: Int?
    /// A flush asked for one attempt whatever the backoff says.
    private var forcedAttempt = false
    /// A storage error stopped the work until something new asks for it.
    private var storageProblem: String?
    /// Failed attempts per batch, for `Spoor-Retry-Count`.
    private var retryCounts: [BatchID: Int] = [:]

    /// The held batches, in outbox order.
    private var window: [Entry] = []
    private var fetching = false
    /// Requests for work (triggers, flushes, timers) and the newest one a fetch that found nothing covered: the
    /// log may hold records while the first is ahead.
    private var workRequested: UInt64 = 0
    private var workCovered: UInt64 = 0
    private var fetchCovers: UInt64 = 0
    /// Release, set-aside and split actions not yet answered.
    private var storeOperations = 0

    private var flushesRequested: UInt64 = 0
    private var flushesCompleted: UInt64 = 0
    private var passesRequested: UInt64 = 0
    private var passesCompleted: UInt64 = 0
    /// The timer armed last, and when the flush interval is next due.
    private var timer: Duration?
    private var intervalDue: Duration?

    /// A machine with `counters` from an earlier launch (their state and next attempt are not carried over).
    package init(settings: Settings, token: String?, random: any RandomNumberGenerator & Sendable,
                 counters: UploadCounters = UploadCounters()) {
        self.settings = settings
        self.token = token
        self.random = random
        self.counters = counters
        self.counters.state = .idle
        self.counters.nextAttemptAt = nil
    }

    /// The ids of the batches held, for ``Action/fetchBatch``.
    package var heldBatchIDs: Set<BatchID> { Set(window.map(\.batch.id)) }

    /// Whether ``stop(at:)`` (or a closed log) ended the machine: actions queued before it that would touch the
    /// network or seal are skipped.
    package var isStopped: Bool { stopping }

    /// Whether ``start(sendingLeftovers:at:)`` was accepted.
    package var isStarted: Bool { started }

    /// How many requests are on the wire.
    package var requestsInFlight: Int { window.count(where: { $0.phase == .sending }) }

    // MARK: - Inputs from the host

    /// Starts; with `sendingLeftovers` the outbox and the log are looked at at once.
    package mutating func start(sendingLeftovers: Bool, at now: UploadInstant) -> [Action] {
        guard !started, !stopping else { return [] }
        started = true
        if sendingLeftovers { workRequested += 1 }
        return pump(now)
    }

    /// An upload is wanted soon. It cuts no backoff or pause short.
    package mutating func trigger(at now: UploadInstant) -> [Action] {
        triggers += 1
        askForWork()
        return pump(now)
    }

    /// A flush: one attempt whatever the backoff, and the end of a pause for authorization. Returns the
    /// generation that ``Action/completeFlushes(through:_:)`` answers, or nil when not started or stopping
    /// (the flush's answer is then ``PendingReason/stopped``).
    package mutating func requestFlush(at now: UploadInstant) -> (generation: UInt64?, actions: [Action]) {
        guard started, !stopping else { return (nil, []) }
        flushesRequested += 1
        // One attempt through the backoff that stands now. Without one there is nothing to cut short: an attempt
        // already on the wire is the flush's attempt, and if it fails, its backoff stands too.
        if let next = nextAttempt, now.monotonic < next { forcedAttempt = true }
        var actions: [Action] = []
        if authorizationPaused != nil {
            authorizationPaused = nil
            actions.append(.notice(.resumedByFlush))
        }
        triggers += 1
        askForWork()
        return (flushesRequested, actions + pump(now))
    }

    /// A trigger whose generation ``Action/completePasses(through:)`` answers once the machine has nothing in
    /// progress; nil when not started or stopping.
    package mutating func requestPass(at now: UploadInstant) -> (generation: UInt64?, actions: [Action]) {
        guard started, !stopping else { return (nil, []) }
        passesRequested += 1
        return (passesRequested, trigger(at: now))
    }

    /// A new token: a pause for authorization ends and the backoff is cut short.
    package mutating func setToken(_ token: String?, at now: UploadInstant) -> [Action] {
        self.token = token
        nextAttempt = nil
        var actions: [Action] = []
        if authorizationPaused != nil {
            authorizationPaused = nil
            actions.append(.notice(.resumedByToken))
        }
        return actions + trigger(at: now)
    }

    /// The user's consent: while withheld nothing is sealed or sent; granting it again asks for an upload.
    package mutating func setConsent(granted: Bool, at now: UploadInstant) -> [Action] {
        let changed = consentWithheld == granted
        consentWithheld = !granted
        if changed, granted { return trigger(at: now) }
        return pump(now)
    }

    /// The flush interval runs only while active; turning it on asks for an upload.
    package mutating func setIntervalActive(_ active: Bool, at now: UploadInstant) -> [Action] {
        let resumed = active && intervalPaused
        intervalPaused = !active
        if !active { intervalDue = nil }
        if resumed { return trigger(at: now) }
        return pump(now)
    }

    /// A new network status: the policy sees it, and a network that is back cuts the backoff short.
    package mutating func networkChanged(_ status: NetworkStatus, at now: UploadInstant) -> [Action] {
        let cameBack = status.isAvailable == true && network.isAvailable != true
        network = status
        if cameBack { nextAttempt = nil }
        if cameBack || counters.state == .waitingForPolicy { return trigger(at: now) }
        return pump(now)
    }

    /// The timer armed by ``Action/scheduleTimer(at:)`` went off.
    package mutating func timerFired(at now: UploadInstant) -> [Action] {
        timer = nil
        if let due = intervalDue, due <= now.monotonic { intervalDue = nil }
        askForWork()
        return pump(now)
    }

    /// Stops: requests in flight are abandoned (their batches stay in the outbox) and every waiter is answered.
    package mutating func stop(at now: UploadInstant) -> [Action] {
        guard !stopping else { return [] }
        stopping = true
        counters.state = .stopped
        counters.nextAttemptAt = nil
        var actions: [Action] = [.cancelRequests]
        if timer != nil {
            timer = nil
            actions.append(.scheduleTimer(at: nil))
        }
        flushesCompleted = flushesRequested
        passesCompleted = passesRequested
        actions += [.completeFlushes(through: .max, .stopped), .completePasses(through: .max), .persistCounters(counters)]
        return actions
    }

    // MARK: - Inputs from the driver's work

    /// The answer to ``Action/fetchBatch``: the next batch, or nil when the log has nothing to seal.
    package mutating func batchFetched(_ batch: SealedBatch?, at now: UploadInstant) -> [Action] {
        fetching = false
        guard !stopping else { return [] }
        if let batch {
            if !heldBatchIDs.contains(batch.id) { window.append(Entry(batch: batch, phase: .waiting)) }
        } else {
            workCovered = max(workCovered, fetchCovers)
        }
        return pump(now)
    }

    /// A held batch is no longer in the outbox (its frame cannot be read): it is forgotten.
    package mutating func batchVanished(_ id: BatchID, at now: UploadInstant) -> [Action] {
        window.removeAll { $0.batch.id == id }
        retryCounts[id] = nil
        return pump(now)
    }

    /// What came of sending batch `id`.
    package mutating func answered(_ id: BatchID, _ answer: Answer, at now: UploadInstant) -> [Action] {
        guard !stopping else { return [] }
        guard let index = window.firstIndex(where: { $0.batch.id == id && $0.phase == .sending }) else { return pump(now) }
        let batch = window[index].batch
        let retry = retryCounts[id] ?? 0
        var actions: [Action] = []
        let outcome: UploadAttempt.Outcome
        switch answer {
        case .failed(let error):
            outcome = retryLater(index, status: nil, error: error.description, retryAfter: nil, timedOut: error.kind == .timedOut,
                                 now, &actions)
            actions.append(.report(UploadAttempt(batchID: id, records: batch.recordCount, bytes: batch.frameBytes, retry: retry,
                                                 status: nil, error: error.description, outcome: outcome)))
            return actions + pump(now)
        case .response(let status, let retryAfter, let duplicate, let reason):
            counters.lastStatus = status
            switch status {
            case 200..<300:
                window[index].phase = .delivered(duplicate: duplicate)
                if window[index].sentAfterFailure == failureCount {
                    if failures > 0 { actions.append(.notice(.recovered(status: status))) }
                    failures = 0
                    nextAttempt = nil
                    counters.nextAttemptAt = pausedUntil?.wall
                }
                outcome = duplicate ? .duplicate : .delivered
            case 401, 403:
                window[index].phase = .waiting
                if authorizationPaused == nil { actions.append(.notice(.authorizationRefused(status: status, reason: reason))) }
                authorizationPaused = status
                nextAttempt = nil
                counters.nextAttemptAt = nil
                counters.authorizationPauses += 1
                counters.lastError = "\(status) \(reason)"
                outcome = .pausedForAuthorization
            case 413 where batch.recordCount > 1:
                window[index].phase = .splitting
                storeOperations += 1
                actions.append(.split(batch, reason: reason))
                outcome = .split
            case 413:
                window[index].phase = .refused(status: 413, reason: "a single event is too large: \(reason)")
                outcome = .setAside
            case 408, 429:
                outcome = retryLater(index, status: status, error: "\(status) \(reason)", retryAfter: retryAfter, timedOut: false,
                                     now, &actions)
            case 400..<500:
                window[index].phase = .refused(status: status, reason: reason)
                outcome = .setAside
            default:
                outcome = retryLater(index, status: status, error: "\(status) \(reason)", retryAfter: retryAfter, timedOut: false,
                                     now, &actions)
            }
            actions.append(.report(UploadAttempt(batchID: id, records: batch.recordCount, bytes: batch.frameBytes, retry: retry,
                                                 status: status, error: (200..<300).contains(status) ? nil : reason,
                                                 outcome: outcome)))
        }
        return actions + pump(now)
    }

    /// ``Action/release(_:)`` is done: the batch is out of the outbox.
    package mutating func released(_ id: BatchID, at now: UploadInstant) -> [Action] {
        storeOperations -= 1
        guard let index = window.firstIndex(where: { $0.batch.id == id }) else { return pump(now) }
        let entry = window.remove(at: index)
        counters.deliveredBatches += 1
        counters.deliveredEvents += entry.batch.recordCount
        counters.deliveredBytes += entry.batch.frameBytes
        if case .leaving(duplicate: true, _, _) = entry.phase { counters.duplicateBatches += 1 }
        retryCounts[id] = nil
        return pump(now)
    }

    /// ``Action/setAside(_:status:reason:)`` is done; `dropped` older refused batches left the rejected area.
    package mutating func setAside(_ id: BatchID, dropped: Int, at now: UploadInstant) -> [Action] {
        storeOperations -= 1
        guard let index = window.firstIndex(where: { $0.batch.id == id }) else { return pump(now) }
        let entry = window.remove(at: index)
        counters.rejectedBatches += 1
        counters.rejectedEvents += entry.batch.recordCount
        counters.rejectedDropped += dropped
        if let reason = refusal(of: entry) { counters.lastError = "\(reason.status) \(reason.reason)" }
        retryCounts[id] = nil
        return [.persistCounters(counters)] + pump(now)
    }

    /// ``Action/split(_:reason:)`` is done: the batch is replaced by `parts`, in order, in the outbox.
    package mutating func split(_ id: BatchID, into parts: [SealedBatch], at now: UploadInstant) -> [Action] {
        storeOperations -= 1
        guard let index = window.firstIndex(where: { $0.batch.id == id }) else { return pump(now) }
        counters.splits += 1
        retryCounts[id] = nil
        let held = heldBatchIDs
        window.replaceSubrange(index...index, with: parts.filter { !held.contains($0.id) }.map { Entry(batch: $0, phase: .waiting) })
        return pump(now)
    }

    /// ``Action/split(_:reason:)`` found the batch cannot be split: it is set aside with `reason`.
    package mutating func splitImpossible(_ id: BatchID, reason: String, at now: UploadInstant) -> [Action] {
        storeOperations -= 1
        if let index = window.firstIndex(where: { $0.batch.id == id }) { window[index].phase = .refused(status: 413, reason: reason) }
        return pump(now)
    }

    /// A storage step failed (for batch `id`, if any). A closed log stops the machine; otherwise the batch is let
    /// go (it stays in the outbox and is fetched again) and no work starts until something asks for it.
    package mutating func storageFailed(_ id: BatchID?, reason: String, closed: Bool, at now: UploadInstant) -> [Action] {
        if let id, let index = window.firstIndex(where: { $0.batch.id == id }) {
            switch window[index].phase {
            case .leaving, .splitting: storeOperations -= 1
            case .waiting, .sending, .delivered, .refused: break
            }
            window.remove(at: index)
        } else if id == nil {
            fetching = false
        }
        if closed { return stop(at: now) }
        guard !stopping else { return [] }
        storageProblem = reason
        return pump(now)
    }

    // MARK: - The rules

    private mutating func askForWork() {
        workRequested += 1
        storageProblem = nil
    }

    /// Why nothing may be sent now, or nil. `forcedAttempt` lets one attempt through a backoff.
    private mutating func gate(_ now: UploadInstant) -> PendingReason? {
        if stopping { return .stopped }
        if consentWithheld { return .optedOut }
        if let paused = pausedUntil {
            if now.monotonic < paused.monotonic { return .pausedByServer(until: paused.wall) }
            pausedUntil = nil
        }
        if let status = authorizationPaused { return .authorizationRejected(status: status) }
        if let next = nextAttempt, now.monotonic < next, !forcedAttempt {
            return .backingOff(nextAttemptAt: counters.nextAttemptAt ?? 0, lastError: counters.lastError ?? "")
        }
        if !settings.policy.allowsUpload(network) { return .policy(settings.policy.name) }
        if let problem = storageProblem { return .storage(problem) }
        return nil
    }

    /// Keeps the batch at `index` and schedules the next attempt: after `Retry-After` when given (for everyone),
    /// else after the backoff.
    private mutating func retryLater(_ index: Int, status: Int?, error: String, retryAfter: String?, timedOut: Bool,
                                     _ now: UploadInstant, _ actions: inout [Action]) -> UploadAttempt.Outcome {
        let id = window[index].batch.id
        window[index].phase = .waiting
        retryCounts[id, default: 0] += 1
        failures += 1
        failureCount += 1
        counters.retries += 1
        if timedOut { counters.timeouts += 1 }
        counters.lastError = error
        if failures == 1 { actions.append(.notice(.failing(batch: id, error: error, status: status))) }
        // The jittered backoff still grows under a server's pause: `Retry-After: 0` is no licence to hammer.
        let delay = settings.backoff.delay(afterFailures: failures, using: &random)
        if let serverPause = retryAfter.flatMap({ RetryAfter.parse($0, nowMilliseconds: now.wall) }) {
            let pause = max(serverPause, delay)
            let until = now.wall + pause.milliseconds
            pausedUntil = (now.monotonic + pause, until)
            nextAttempt = nil
            counters.serverPauses += 1
            counters.nextAttemptAt = until
            return .pausedByServer
        }
        nextAttempt = now.monotonic + delay
        counters.nextAttemptAt = now.wall + delay.milliseconds
        return .retryLater
    }

    private func refusal(of entry: Entry) -> (status: Int, reason: String)? {
        if case .leaving(_, let status?, let reason) = entry.phase { return (status, reason) }
        return nil
    }

    /// Decides what to do next: send waiting batches, fetch more, let finished batches leave in order, answer
    /// flushes once nothing is in progress, and arm the timer.
    private mutating func pump(_ now: UploadInstant) -> [Action] {
        guard started, !stopping else { return [] }
        var actions: [Action] = []
        // After a failure, one batch at a time until an attempt succeeds. A batch being split keeps its place.
        let limit = failures > 0 ? 1 : settings.maxBatchesInFlight
        var inFlight = window.count(where: { $0.phase == .sending || $0.phase == .splitting })
        for index in window.indices where window[index].phase == .waiting {
            guard inFlight < limit, gate(now) == nil else { break }
            let batch = window[index].batch
            window[index].phase = .sending
            window[index].sentAfterFailure = failureCount
            forcedAttempt = false
            inFlight += 1
            counters.requests += 1
            counters.state = .uploading
            actions.append(.send(batch, retry: retryCounts[batch.id] ?? 0, token: token))
        }
        if !fetching, window.count < settings.maxBatchesInFlight, inFlight < limit, workRequested > workCovered, gate(now) == nil {
            fetching = true
            fetchCovers = workRequested
            actions.append(.fetchBatch)
        }
        // Finished batches leave the outbox oldest first.
        for index in window.indices {
            switch window[index].phase {
            case .leaving:
                continue
            case .delivered(let duplicate):
                window[index].phase = .leaving(duplicate: duplicate, refusedStatus: nil, reason: "")
                storeOperations += 1
                actions.append(.release(window[index].batch))
                continue
            case .refused(let status, let reason):
                window[index].phase = .leaving(duplicate: false, refusedStatus: status, reason: reason)
                storeOperations += 1
                actions.append(.setAside(window[index].batch, status: status, reason: reason))
                continue
            case .waiting, .sending, .splitting:
                break
            }
            break
        }
        let busy = fetching || storeOperations > 0 || inFlight > 0
        if !busy { settle(now, &actions) }
        let wanted = deadline(now)
        if wanted != timer {
            timer = wanted
            actions.append(.scheduleTimer(at: wanted))
        }
        return actions
    }

    /// Nothing is in progress: record the state, answer waiting flushes and passes, and re-arm the interval.
    private mutating func settle(_ now: UploadInstant, _ actions: inout [Action]) {
        let reason = gate(now)
        let newState: UploadState
        switch reason {
        case nil, .storage, .timedOut, .noServer: newState = .idle
        case .backingOff: newState = .backingOff
        case .pausedByServer: newState = .pausedByServer
        case .authorizationRejected: newState = .pausedForAuthorization
        case .policy: newState = .waitingForPolicy
        case .optedOut: newState = .pausedForConsent
        case .stopped: newState = .stopped
        }
        if newState == .idle, pausedUntil == nil, nextAttempt == nil { counters.nextAttemptAt = nil }
        if counters.state != newState {
            counters.state = newState
            if newState == .waitingForPolicy { actions.append(.notice(.waitingForPolicy(settings.policy.name))) }
            if newState == .pausedByServer, case .pausedByServer(let until) = reason { actions.append(.notice(.pausedByServer(until: until))) }
            actions.append(.persistCounters(counters))
        }
        forcedAttempt = false
        if flushesRequested > flushesCompleted {
            flushesCompleted = flushesRequested
            actions.append(.completeFlushes(through: flushesRequested, reason))
        }
        if passesRequested > passesCompleted {
            passesCompleted = passesRequested
            actions.append(.completePasses(through: passesRequested))
        }
        // The interval counts from the first quiet moment after it last fired (or was turned on).
        if let interval = settings.flushInterval, !intervalPaused, intervalDue == nil { intervalDue = now.monotonic + interval }
    }

    /// When the machine must look again without being asked: the end of a pause or backoff, or the flush interval.
    private func deadline(_ now: UploadInstant) -> Duration? {
        if let paused = pausedUntil { return paused.monotonic }
        if authorizationPaused != nil { return nil }
        if let next = nextAttempt, next > now.monotonic { return next }
        return intervalDue
    }
}
