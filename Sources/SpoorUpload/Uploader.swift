public import Foundation
public import Logging
import SpoorWire
import SpoorSystem
public import SpoorLog

/// Ships the sealed batches of one ``/SpoorLog/EventLog`` to a collector (docs/upload.md has the triggers and what each answer
/// does).
///
/// One task does all the work, off every caller's thread: it seals a batch when the outbox is empty, POSTs the
/// oldest pending batch, and applies the answer:
///
/// | answer | what happens |
/// | --- | --- |
/// | 2xx | the batch is released |
/// | 408, 429, 5xx, timeout, network error | kept; retried after a backoff with full jitter, or after `Retry-After` (a pause for the whole uploader, at most 1 h) |
/// | 401, 403 | uploads pause (logged once) until ``setToken(_:)``, ``flush(timeout:)`` or a new launch |
/// | 413 | the batch is split in two (ids derived from its id) and each half sent; a single event is set aside |
/// | other 4xx | the batch is set aside in the ``/SpoorLog/RejectedArea`` |
///
/// One batch is in flight at a time, in outbox order. A request that outlives ``UploadConfiguration/requestTimeout``
/// counts as failed whatever the HTTP client does, and ``stop()`` abandons an in-flight request at once, so
/// neither a flush nor a shutdown is held by a stalled upload. Each state change is logged once, not each retry.
public final class Uploader: Sendable {
    /// The file in the log directory that keeps the counters across launches.
    public static let countersFileName = DirectoryLayout.uploadCountersName

    /// The log whose batches are sent.
    public let log: EventLog
    /// Where refused batches are kept.
    public let rejected: RejectedArea
    private let configuration: UploadConfiguration
    private let logger: Logger
    private let state: Locked<State>
    /// An `UploadExecutor` where task executors exist (typed loosely so the stored property needs no availability).
    private let executor: (any Sendable)?

    private struct State {
        var counters = UploadCounters()
        var token: String?
        var network = NetworkStatus.unknown
        var random: any RandomNumberGenerator & Sendable
        /// A trigger arrived while the loop was busy.
        var woken = false
        /// Calls of ``trigger()`` so far (``triggerCount``).
        var triggers = 0
        var waiting: CheckedContinuation<Void, Never>?
        /// Flushes asked for and served.
        var flushes = FlushGenerations<PendingReason?>()
        /// Waiters for a pass of the loop (``nextPass(timeout:)``), numbered as flushes are.
        var passes = FlushGenerations<Bool>()
        /// Consecutive failed attempts.
        var failures = 0
        /// Backoff: no automatic attempt before this (monotonic).
        var nextAttempt: Duration?
        /// `Retry-After`: no attempt at all before this (monotonic), and its wall-clock time.
        var pausedUntil: (monotonic: Duration, wall: Int64)?
        /// 401 or 403: the status, until resumed.
        var authorizationPaused: Int?
        /// The user opted out: nothing is sealed or sent (``setConsent(granted:)``).
        var consentWithheld = false
        /// The flush interval is off while the app is not started (``setIntervalActive(_:)``).
        var intervalPaused = false
        /// Failed attempts per batch, for `Spoor-Retry-Count`.
        var retryCounts: [BatchID: Int] = [:]
        var inflight: Promise<Result<HTTPResponse, HTTPClientError>>?
        var loop: Task<Void, Never>?
        var started = false
        var stopping = false
        var lastReason: PendingReason?
    }

    /// Creates an uploader for `log`; nothing is sent before ``start(sendingLeftovers:)``.
    ///
    /// The counters of earlier launches are read from the log directory's `upload.json`; a pause for
    /// authorization is not carried over (a new launch resumes).
    /// - Throws: ``/SpoorLog/StorageError`` when the rejected area cannot be created.
    public init(log: EventLog, configuration: UploadConfiguration, logger: Logger = Logger(label: "spoor.upload")) throws(StorageError) {
        self.log = log
        self.configuration = configuration
        self.logger = logger
        rejected = try RejectedArea(logDirectory: log.directory, limits: configuration.rejectedLimits, logger: logger)
        var initial = State(random: configuration.random)
        initial.token = configuration.token
        if var counters = Self.savedCounters(logDirectory: log.directory) {
            counters.state = .idle
            counters.nextAttemptAt = nil
            initial.counters = counters
        }
        state = Locked(initial)
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            executor = UploadExecutor()
        } else {
            executor = nil
        }
    }

    // MARK: - Control

    /// Starts the upload task. With `sendingLeftovers` (the default) it sends what earlier launches left in the
    /// outbox and the log right away; without, it waits for the first trigger or flush (`spoor upload` gives
    /// each batch exactly one attempt that way).
    public func start(sendingLeftovers: Bool = true) {
        let begin = state.withLock { s -> Bool in
            guard !s.started, !s.stopping else { return false }
            s.started = true
            s.woken = sendingLeftovers
            return true
        }
        guard begin else { return }
        configuration.networkMonitor?.start { [weak self] status in self?.networkChanged(status) }
        let task = Self.spawn(executor) { [self] in await run() }
        state.withLock { $0.loop = task }
    }

    /// Asks for an upload soon (events reached the batch size, the app started or ended, a user logged in).
    /// Never blocks; triggers that come while an upload runs are merged. It does not cut a backoff or a pause short.
    public func trigger() {
        let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.triggers += 1
            if let waiting = s.waiting {
                s.waiting = nil
                return waiting
            }
            s.woken = true
            return nil
        }
        continuation?.resume()
    }

    /// How many times ``trigger()`` has been called: a test compares it before and after something that must not
    /// ask for an upload (the count moves inside the call, so no later reaction of the loop is needed to see it).
    package var triggerCount: Int {
        state.withLock { $0.triggers }
    }

    /// Turns the ``UploadConfiguration/flushInterval`` trigger off or on: uploads run on the interval only
    /// while the app is started (the end's upload runs in the host's background window, and a suspended
    /// app must not be woken for it). A program with no lifecycle source keeps it on. Other triggers are
    /// unaffected; turning it on asks for an upload, as a start does.
    public func setIntervalActive(_ active: Bool) {
        let resumed = state.withLock { s -> Bool in
            defer { s.intervalPaused = !active }
            return active && s.intervalPaused
        }
        if resumed { trigger() }
    }

    /// Replaces the token; a pause for authorization ends and uploads resume.
    public func setToken(_ token: String?) {
        let resumed = state.withLock { s -> Bool in
            s.token = token
            // New credentials are worth an attempt now, whatever the backoff says.
            s.nextAttempt = nil
            defer { s.authorizationPaused = nil }
            return s.authorizationPaused != nil
        }
        if resumed { logger.notice("spoor: a new token was set; uploads resume") }
        trigger()
    }

    /// Sends everything pending now and returns what happened, waiting at most `timeout` (nil: until done).
    ///
    /// A flush cuts a backoff short (one attempt) and ends a pause for authorization; it does not override a
    /// `Retry-After` pause or the upload policy. The log's records are sealed and sent, so call the tracker's
    /// flush (which first stores what was tracked) rather than this from an app.
    public func flush(timeout: Duration? = nil) async -> UploadResult {
        let before = counters
        let answer = Promise<PendingReason?>()
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping, s.started else { return false }
            s.flushes.request(answer)
            return true
        }
        guard accepted else { return result(since: before, reason: .stopped) }
        trigger()
        let reason: PendingReason?
        if let timeout {
            let clock = configuration.clock
            reason = await answer.value(orAfter: timeout, .timedOut, sleep: { try await clock.sleep(for: $0) })
        } else {
            reason = await answer.value
        }
        return result(since: before, reason: reason)
    }

    /// Wakes the loop as ``trigger()`` does (so no backoff or pause is cut short) and returns true once a pass of
    /// the loop that began after the call has finished, or the uploader has stopped; false if that took longer
    /// than `timeout` of real time.
    ///
    /// Whatever the loop does in reaction to what happened before the call (a trigger, a clock step, an answer)
    /// has happened by then, and every sleep it asked of its clock in between has been asked: a test awaits
    /// this before checking that something did *not* happen.
    package func nextPass(timeout: Duration) async -> Bool {
        let passed = Promise<Bool>()
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping, s.started else { return false }
            s.passes.request(passed)
            return true
        }
        guard accepted else { return true }
        trigger()
        return await passed.value(orAfter: timeout, false)
    }

    /// Stops the upload task: an in-flight request is abandoned (the batch stays in the outbox and goes again
    /// at the next launch, with the same id), and waiting flushes return ``PendingReason/stopped``. Returns
    /// once the task has finished, which does not wait for the network.
    public func stop() async {
        let task = beginStop()
        await task?.value
    }

    /// Starts stopping without waiting (for `deinit` and other synchronous paths).
    @discardableResult
    public func beginStop() -> Task<Void, Never>? {
        let (task, inflight, waiting, waiters) = state.withLock { s in
            s.stopping = true
            let waiting = s.waiting
            s.waiting = nil
            return (s.loop, s.inflight, waiting, s.flushes.drain())
        }
        inflight?.fulfil(.failure(HTTPClientError(.cancelled, reason: "the uploader is stopping")))
        waiting?.resume()
        for waiter in waiters { waiter.fulfil(.stopped) }
        configuration.networkMonitor?.stop()
        return task
    }

    /// What the uploader has counted so far.
    public var counters: UploadCounters { state.withLock { $0.counters } }

    /// The user's consent: while withheld (they opted out) nothing is sealed or sent, whatever triggers an upload;
    /// granting it again starts an upload of what waits.
    public func setConsent(granted: Bool) {
        let changed = state.withLock { s -> Bool in
            defer { s.consentWithheld = !granted }
            return s.consentWithheld == granted
        }
        if changed, granted { trigger() }
    }

    /// A network change from the monitor: the policy sees the new status, and a network that is back cuts the
    /// backoff short.
    public func networkChanged(_ status: NetworkStatus) {
        let retry = state.withLock { s -> Bool in
            let cameBack = status.isAvailable == true && s.network.isAvailable != true
            s.network = status
            if cameBack { s.nextAttempt = nil }
            return cameBack || s.counters.state == .waitingForPolicy
        }
        if retry { trigger() }
    }

    // MARK: - The loop

    private func run() async {
        while true {
            let deadline = state.withLock { s -> Duration?? in
                if s.stopping { return .none }
                return .some(nextDeadline(s))
            }
            guard let deadline else { break }
            await waitForWake(until: deadline)
            let (generation, passGeneration, forced, stopping) = state.withLock { s in
                (s.flushes.requested, s.passes.requested, s.flushes.isPending, s.stopping)
            }
            if stopping { break }
            let reason = await drain(forced: forced)
            let (ready, passed) = state.withLock { s in
                s.lastReason = reason
                return (s.flushes.complete(through: generation), s.passes.complete(through: passGeneration))
            }
            for waiter in ready { waiter.fulfil(reason) }
            for waiter in passed { waiter.fulfil(true) }
            if reason == .stopped { break }
        }
        let (waiters, passWaiters) = state.withLock { s in
            s.counters.state = .stopped
            s.counters.nextAttemptAt = nil
            return (s.flushes.drain(), s.passes.drain())
        }
        for waiter in waiters { waiter.fulfil(.stopped) }
        for waiter in passWaiters { waiter.fulfil(true) }
        saveCounters()
    }

    /// When the loop must look again without a trigger: the end of a pause or backoff, or the flush interval
    /// while events wait.
    private func nextDeadline(_ s: State) -> Duration? {
        if let paused = s.pausedUntil { return paused.monotonic }
        if s.authorizationPaused != nil { return nil }
        if let next = s.nextAttempt { return next }
        guard let interval = configuration.flushInterval, !s.intervalPaused else { return nil }
        return configuration.clock.now() + interval
    }

    /// Waits for a trigger, or until `deadline` (monotonic) passes.
    private func waitForWake(until deadline: Duration?) async {
        let clock = configuration.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForTrigger() }
            if let deadline {
                group.addTask { try? await clock.sleep(for: max(.zero, deadline - clock.now())) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForTrigger() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if s.woken || s.stopping || Task.isCancelled {
                        s.woken = false
                        return true
                    }
                    s.waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { s -> CheckedContinuation<Void, Never>? in
                defer { s.waiting = nil }
                return s.waiting
            }
            waiting?.resume()
        }
    }

    /// Sends batches until none is left or something stops progress; returns why events still wait (nil: none).
    private func drain(forced: Bool) async -> PendingReason? {
        var forcedAttempt = forced
        if forced {
            let resumed = state.withLock { s -> Bool in
                defer { s.authorizationPaused = nil }
                return s.authorizationPaused != nil
            }
            if resumed { logger.notice("spoor: flush() resumes uploads paused for authorization") }
        }
        while true {
            let now = configuration.clock.now()
            let gate = state.withLock { s -> PendingReason?? in
                if s.stopping { return .some(.stopped) }
                if s.consentWithheld { return .some(.optedOut) }
                if let paused = s.pausedUntil {
                    if now < paused.monotonic { return .some(.pausedByServer(until: paused.wall)) }
                    s.pausedUntil = nil
                }
                if let status = s.authorizationPaused { return .some(.authorizationRejected(status: status)) }
                if let next = s.nextAttempt, now < next {
                    if !forcedAttempt {
                        return .some(.backingOff(nextAttemptAt: s.counters.nextAttemptAt ?? 0, lastError: s.counters.lastError ?? ""))
                    }
                }
                if !configuration.policy.allowsUpload(s.network) { return .some(.policy(configuration.policy.name)) }
                return .none
            }
            if let blocked = gate {
                settle(blocked)
                return blocked
            }
            forcedAttempt = false

            let batch: SealedBatch
            let frame: [UInt8]
            do {
                if let first = log.pendingBatches().first {
                    batch = first
                } else if let sealed = try log.seal(maxRecords: configuration.batchSize, maxBytes: configuration.maxBatchBytes,
                                                    codec: configuration.codec) {
                    batch = sealed
                } else {
                    settle(nil)
                    return nil
                }
                frame = try log.frame(of: batch.id)
            } catch {
                if error.kind == .closed { return .stopped }
                if error.kind == .unknownBatch { continue }
                logger.error("spoor: cannot read a batch to upload", metadata: ["error": "\(error)"])
                let reason = PendingReason.storage(error.description)
                settle(reason)
                return reason
            }
            if let stop = await send(batch, frame: frame) {
                settle(stop)
                return stop
            }
        }
    }

    /// Sends one batch and applies the answer; returns a reason to stop draining, or nil to go on.
    private func send(_ batch: SealedBatch, frame: [UInt8]) async -> PendingReason? {
        let (retry, token) = state.withLock { s in
            s.counters.requests += 1
            return (s.retryCounts[batch.id] ?? 0, s.token)
        }
        setState(.uploading)
        var headers: [(name: String, value: String)] = [
            ("Content-Type", BatchFrame.mediaType),
            ("User-Agent", configuration.userAgent),
            ("Spoor-Batch-Id", batch.id.description),
        ]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if retry > 0 { headers.append(("Spoor-Retry-Count", "\(retry)")) }
        let request = HTTPRequest(url: configuration.url, headers: headers, body: frame, timeout: configuration.requestTimeout)

        let response: HTTPResponse
        switch await perform(request) {
        case .success(let answer):
            response = answer
        case .failure(let error):
            if error.kind == .cancelled, state.withLock({ $0.stopping }) { return .stopped }
            let reason = retryLater(batch, status: nil, error: error.description, retryAfter: nil, timedOut: error.kind == .timedOut)
            configuration.onAttempt?(UploadAttempt(batchID: batch.id, records: batch.recordCount, bytes: frame.count, retry: retry,
                                                   status: nil, error: error.description, outcome: .retryLater))
            return reason
        }
        let reason = handle(response, batch: batch, frame: frame)
        if let onAttempt = configuration.onAttempt {
            onAttempt(UploadAttempt(
                batchID: batch.id, records: batch.recordCount, bytes: frame.count, retry: retry, status: response.status,
                error: (200..<300).contains(response.status) ? nil : Self.reason(response),
                outcome: Self.outcome(of: response, records: batch.recordCount, stopped: reason)))
        }
        return reason
    }

    /// What ``handle(_:batch:frame:)`` did with a batch, for ``UploadConfiguration/onAttempt``.
    static func outcome(of response: HTTPResponse, records: Int, stopped reason: PendingReason?) -> UploadAttempt.Outcome {
        switch response.status {
        case 200..<300:
            return isDuplicate(response) ? .duplicate : .delivered
        case 401, 403: return .pausedForAuthorization
        case 413: return records > 1 && reason == nil ? .split : .setAside
        case 408, 429: break
        case 400..<500: return .setAside
        default: break
        }
        if case .pausedByServer = reason { return .pausedByServer }
        return .retryLater
    }

    private func handle(_ response: HTTPResponse, batch: SealedBatch, frame: [UInt8]) -> PendingReason? {
        let status = response.status
        state.withLock { $0.counters.lastStatus = status }
        switch status {
        case 200..<300:
            do {
                try log.release(batch.id)
            } catch {
                if error.kind == .closed { return .stopped }
                logger.error("spoor: a delivered batch cannot be released", metadata: ["batch": "\(batch.id)", "error": "\(error)"])
                return .storage(error.description)
            }
            let duplicate = Self.isDuplicate(response)
            let recovered = state.withLock { s -> Bool in
                s.counters.deliveredBatches += 1
                s.counters.deliveredEvents += batch.recordCount
                s.counters.deliveredBytes += frame.count
                if duplicate { s.counters.duplicateBatches += 1 }
                s.retryCounts[batch.id] = nil
                defer { s.failures = 0; s.nextAttempt = nil; s.counters.nextAttemptAt = nil }
                return s.failures > 0
            }
            if recovered { logger.notice("spoor: uploads succeed again", metadata: ["status": "\(status)"]) }
            return nil
        case 401, 403:
            let first = state.withLock { s -> Bool in
                s.authorizationPaused = status
                s.nextAttempt = nil
                s.counters.nextAttemptAt = nil
                s.counters.authorizationPauses += 1
                s.counters.lastError = "\(status) \(Self.reason(response))"
                return s.counters.state != .pausedForAuthorization
            }
            if first {
                logger.error("spoor: the collector refused the credentials; uploads are paused until a new token, flush() or a new launch",
                             metadata: ["status": "\(status)", "reason": "\(Self.reason(response))"])
            }
            return .authorizationRejected(status: status)
        case 413:
            return split(batch, frame: frame, response: response)
        case 408, 429:
            return retryLater(batch, status: status, error: "\(status) \(Self.reason(response))", retryAfter: response.header("Retry-After"),
                              timedOut: false)
        case 400..<500:
            return setAside(batch, frame: frame, status: status, reason: Self.reason(response))
        default:
            return retryLater(batch, status: status, error: "\(status) \(Self.reason(response))", retryAfter: response.header("Retry-After"),
                              timedOut: false)
        }
    }

    /// Keeps the batch and schedules the next attempt: after `Retry-After` when given (for everyone), else after
    /// the backoff.
    private func retryLater(_ batch: SealedBatch, status: Int?, error: String, retryAfter: String?, timedOut: Bool) -> PendingReason {
        let clock = configuration.clock
        let now = clock.now()
        let wall = clock.wallMilliseconds()
        let serverPause = retryAfter.flatMap { RetryAfter.parse($0, nowMilliseconds: wall) }
        let (reason, firstFailure) = state.withLock { s -> (PendingReason, Bool) in
            s.retryCounts[batch.id, default: 0] += 1
            s.failures += 1
            s.counters.retries += 1
            if timedOut { s.counters.timeouts += 1 }
            s.counters.lastError = error
            // The jittered backoff still grows under a server's pause: `Retry-After: 0` is no licence to hammer.
            let delay = configuration.backoff.delay(afterFailures: s.failures, using: &s.random)
            let wasFailing = s.failures > 1
            if let serverPause {
                let pause = max(serverPause, delay)
                let until = wall + Backoff.nanoseconds(pause) / 1_000_000
                s.pausedUntil = (now + pause, until)
                s.nextAttempt = nil
                s.counters.serverPauses += 1
                s.counters.nextAttemptAt = until
                return (.pausedByServer(until: until), !wasFailing)
            }
            let at = wall + Backoff.nanoseconds(delay) / 1_000_000
            s.nextAttempt = now + delay
            s.counters.nextAttemptAt = at
            return (.backingOff(nextAttemptAt: at, lastError: error), !wasFailing)
        }
        if firstFailure {
            logger.warning("spoor: an upload failed; the batch is kept and retried with backoff", metadata: [
                "batch": "\(batch.id)", "error": "\(error)", "status": "\(status.map(String.init) ?? "none")",
            ])
        }
        return reason
    }

    /// A 413: the batch goes again as two halves; a single event too large is set aside.
    private func split(_ batch: SealedBatch, frame: [UInt8], response: HTTPResponse) -> PendingReason? {
        guard batch.recordCount > 1 else {
            return setAside(batch, frame: frame, status: 413, reason: "a single event is too large: \(Self.reason(response))")
        }
        let halves: [[UInt8]]
        do {
            guard let made = try BatchSplit.halves(of: frame) else {
                return setAside(batch, frame: frame, status: 413, reason: "a single event is too large: \(Self.reason(response))")
            }
            halves = made
        } catch {
            return setAside(batch, frame: frame, status: 413, reason: "too large, and cannot be split: \(error)")
        }
        do {
            let parts = try log.replace(batch.id, withFrames: halves)
            state.withLock { s in
                s.counters.splits += 1
                s.retryCounts[batch.id] = nil
            }
            logger.notice("spoor: the collector found a batch too large; it is sent again in two halves", metadata: [
                "batch": "\(batch.id)", "parts": "\(parts.map { "\($0.id) (\($0.recordCount))" }.joined(separator: ", "))",
            ])
            return nil
        } catch {
            if error.kind == .closed { return .stopped }
            logger.error("spoor: cannot split a batch", metadata: ["batch": "\(batch.id)", "error": "\(error)"])
            return .storage(error.description)
        }
    }

    /// Moves a refused batch to the rejected area and removes it from the outbox.
    private func setAside(_ batch: SealedBatch, frame: [UInt8], status: Int, reason: String) -> PendingReason? {
        do {
            let dropped = try rejected.setAside(frame: frame, id: batch.id, status: status, at: configuration.clock.wallMilliseconds(),
                                                durable: log.configuration.durability != .none)
            try log.discard(batch.id)
            state.withLock { s in
                s.counters.rejectedBatches += 1
                s.counters.rejectedEvents += batch.recordCount
                s.counters.rejectedDropped += dropped.count
                s.counters.lastError = "\(status) \(reason)"
                s.retryCounts[batch.id] = nil
            }
            logger.error("spoor: the collector refused a batch; it is set aside in the rejected area", metadata: [
                "batch": "\(batch.id)", "events": "\(batch.recordCount)", "status": "\(status)", "reason": "\(reason)",
            ])
            saveCounters()
            return nil
        } catch {
            if error.kind == .closed { return .stopped }
            logger.error("spoor: cannot set a refused batch aside", metadata: ["batch": "\(batch.id)", "error": "\(error)"])
            return .storage(error.description)
        }
    }

    /// Sends `request`, giving up at the timeout (on the injected clock) or when the uploader stops.
    private func perform(_ request: HTTPRequest) async -> Result<HTTPResponse, HTTPClientError> {
        let outcome = Promise<Result<HTTPResponse, HTTPClientError>>()
        let stopping = state.withLock { s -> Bool in
            s.inflight = outcome
            return s.stopping
        }
        if stopping { return .failure(HTTPClientError(.cancelled, reason: "the uploader is stopping")) }
        let client = configuration.client
        let clock = configuration.clock
        let timeout = request.timeout
        let sending = Self.spawn(executor) {
            do {
                outcome.fulfil(.success(try await client.send(request)))
            } catch let error as HTTPClientError {
                outcome.fulfil(.failure(error))
            } catch is CancellationError {
                outcome.fulfil(.failure(HTTPClientError(.cancelled, reason: "cancelled")))
            } catch {
                outcome.fulfil(.failure(HTTPClientError(.network, reason: "\(error)")))
            }
        }
        let executor = executor
        let result = await outcome.value(
            orAfter: timeout, .failure(HTTPClientError(.timedOut, reason: "no answer within \(timeout)")),
            sleep: { try await clock.sleep(for: $0) }, spawn: { Self.spawn(executor, $0) })
        sending.cancel()
        state.withLock { $0.inflight = nil }
        return result
    }

    // MARK: - Bookkeeping

    /// Records the state the drain ended in, logging a change of policy state.
    private func settle(_ reason: PendingReason?) {
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
        let changed = setState(newState)
        if changed, newState == .waitingForPolicy {
            logger.info("spoor: uploads wait for the upload policy", metadata: ["policy": "\(configuration.policy.name)"])
        }
        if changed, newState == .pausedByServer, case .pausedByServer(let until) = reason {
            logger.warning("spoor: the collector asked for a pause; uploads resume later", metadata: ["until": "\(until)"])
        }
        if changed { saveCounters() }
    }

    @discardableResult
    private func setState(_ new: UploadState) -> Bool {
        state.withLock { s in
            defer { s.counters.state = new }
            if new == .idle || new == .uploading { if s.pausedUntil == nil && s.nextAttempt == nil { s.counters.nextAttemptAt = nil } }
            return s.counters.state != new
        }
    }

    private func result(since before: UploadCounters, reason: PendingReason?) -> UploadResult {
        let now = counters
        let pending = log.pendingBatches()
        let pendingEvents = pending.reduce(0) { $0 + $1.recordCount } + log.recordCount
        return UploadResult(
            deliveredBatches: now.deliveredBatches - before.deliveredBatches, deliveredEvents: now.deliveredEvents - before.deliveredEvents,
            rejectedBatches: now.rejectedBatches - before.rejectedBatches, pendingBatches: pending.count, pendingEvents: pendingEvents,
            pendingReason: reason)
    }

    /// Writes the counters to `upload.json` (on state changes and at the end, not per batch).
    private func saveCounters() {
        let counters = counters
        guard let data = try? JSONEncoder().encode(counters) else { return }
        let directory = log.directory.standardizedFileURL.path
        try? FileIO.writeAtomically(Array(data), to: directory + "/" + Self.countersFileName, directory: directory, durable: false)
    }

    /// Whether a 2xx answer says the collector had stored the batch before (`"duplicate": true`).
    static func isDuplicate(_ response: HTTPResponse) -> Bool {
        String(decoding: response.body.prefix(256), as: UTF8.self).replacingOccurrences(of: " ", with: "")
            .contains("\"duplicate\":true")
    }

    /// The collector's reason from its JSON body, or the body's start.
    static func reason(_ response: HTTPResponse) -> String {
        let text = String(decoding: response.body.prefix(512), as: UTF8.self)
        if let data = text.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            if let reason = object["reason"] as? String { return reason }
            if let error = object["error"] as? String { return error }
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads the counters a tracker saved in `logDirectory` (for `spoor inspect`), or nil.
    public static func savedCounters(logDirectory: URL) -> UploadCounters? {
        guard let bytes = try? FileIO.readFile(logDirectory.standardizedFileURL.path + "/" + countersFileName, limit: 1 << 16) else {
            return nil
        }
        return try? JSONDecoder().decode(UploadCounters.self, from: Data(bytes))
    }
}

/// Runs the upload task's jobs on a serial dispatch queue of its own rather than Swift's cooperative pool, so a
/// host that blocks every pool thread for a while (synchronous waits in tasks) does not stall uploads.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
final class UploadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the queue is thread-safe and never changes.
    private let queue = DispatchQueue(label: "spoor.upload")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

extension Uploader {
    /// Starts `body` as an unstructured task on the upload executor (where the platform has task executors).
    static func spawn(_ executor: (any Sendable)?, _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *), let executor = executor as? UploadExecutor {
            return Task(executorPreference: executor) { await body() }
        }
        return Task { await body() }
    }
}
