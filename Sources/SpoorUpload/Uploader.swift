package import Foundation
public import Logging
import SpoorWire
import SpoorSystem
public import SpoorLog

/// Ships the sealed batches of one ``/SpoorLog/EventLog`` to a collector (docs/upload.md has the triggers and what each answer
/// does).
///
/// The rules live in `UploadStateMachine` (package-internal); this is its driver. Every call feeds the machine
/// under one lock, and the actions it returns are performed outside the lock, one after another, by a task of the
/// uploader's own (off every caller's thread): sealing, reading frames, releasing, setting aside and splitting
/// batches, writing `upload.json`, arming the timer. Each request runs in a task of its own, so up to
/// ``UploadConfiguration/maxBatchesInFlight`` batches are on the wire at once; batches still leave the outbox in
/// outbox order.
///
/// | answer | what happens |
/// | --- | --- |
/// | 2xx | the batch is released (after every older batch has left) |
/// | 408, 429, 5xx, timeout, network error | kept; retried after a backoff with full jitter, or after `Retry-After` (a pause for the whole uploader, at most 1 h) |
/// | 401, 403 | uploads pause (logged once) until a new token (`Tracker.setToken(_:)`), ``flush(timeout:)`` or a new launch |
/// | 413 | the batch is split in two (ids derived from its id) and each half sent; a single event is set aside |
/// | other 4xx | the batch is set aside in the ``/SpoorLog/RejectedArea`` |
///
/// A request that outlives ``UploadConfiguration/requestTimeout`` counts as failed whatever the HTTP client does,
/// and ``stop()`` abandons the requests in flight at once, so neither a flush nor a shutdown is held by a stalled
/// upload. Each state change is logged once, not each retry.
public final class Uploader: Sendable {
    /// The file in the log directory that keeps the counters across launches.
    package static let countersFileName = StorageLayout.uploadCountersName

    /// The log whose batches are sent.
    public let log: EventLog
    /// Where refused batches are kept.
    public let rejected: RejectedArea
    private let configuration: UploadConfiguration
    private let logger: Logger
    /// Asked before each batch is fetched or sent whether it may be (``setConsentProbe(_:)``).
    private let consentProbe = Locked(ConsentProbe())

    /// The probe in a struct: a closure kept directly as a `Locked` value is converted again on every read.
    private struct ConsentProbe {
        var permission: (@Sendable () -> UploadPermission)?
    }

    /// What the consent probe answers.
    package enum UploadPermission: Sendable {
        /// Consent stands.
        case allowed
        /// The user opted out (maybe in another process): consent is withheld here too.
        case optedOut
        /// An erasure of the stored data waits to be carried out here: nothing goes until it is done (the owner of
        /// the probe triggers an upload then).
        case waitForErasure
    }

    /// The probe's answer; allowed when there is none.
    private func permission() -> UploadPermission {
        consentProbe.withLock { $0.permission }?() ?? .allowed
    }
    private let state: Locked<Driver>
    /// An `UploadExecutor` where task executors exist (typed loosely so the stored property needs no availability).
    private let executor: (any Sendable)?

    private typealias Action = UploadStateMachine.Action

    private struct Driver {
        var machine: UploadStateMachine
        /// Actions returned by the machine and not yet performed, in order.
        var queue: [Action] = []
        /// A task is performing `queue`.
        var performing = false
        /// Fulfilled when the performing task finds the queue empty (``stop()`` waits for it).
        var drained: Promise<Void>?
        var flushes: [(generation: UInt64, waiter: Promise<PendingReason?>)] = []
        var passes: [(generation: UInt64, waiter: Promise<Bool>)] = []
        /// The requests on the wire, to abandon at a stop.
        var requests: [BatchID: Promise<Result<HTTPResponse, HTTPClientError>>] = [:]
        var timer: Task<Void, Never>?
        var timerGeneration = 0
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
        // Processes sharing a storage directory share one rejected area, in the `logs` folder beside their logs.
        let rejectedHome = log.shared.map { URL(fileURLWithPath: $0.folder, isDirectory: true) } ?? log.directory
        rejected = try RejectedArea(logDirectory: rejectedHome, limits: configuration.rejectedLimits, logger: logger)
        let settings = UploadStateMachine.Settings(
            maxBatchesInFlight: configuration.maxBatchesInFlight, backoff: configuration.backoff,
            flushInterval: configuration.flushInterval, policy: configuration.policy)
        let machine = UploadStateMachine(settings: settings, token: configuration.token, random: configuration.random,
                                         counters: Self.savedCounters(logDirectory: log.directory) ?? UploadCounters())
        state = Locked(Driver(machine: machine))
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            executor = UploadExecutor()
        } else {
            executor = nil
        }
    }

    // MARK: - Control

    /// Starts uploading. With `sendingLeftovers` (the default) it sends what earlier launches left in the
    /// outbox and the log right away; without, it waits for the first trigger or flush (`spoor upload` gives
    /// each batch exactly one attempt that way).
    public func start(sendingLeftovers: Bool = true) {
        var began = false
        feed { machine, now in
            let before = machine.isStarted
            let actions = machine.start(sendingLeftovers: sendingLeftovers, at: now)
            began = !before && machine.isStarted
            return (actions, nil)
        }
        guard began else { return }
        configuration.networkMonitor?.start { [weak self] status in self?.networkChanged(status) }
    }

    /// Asks for an upload soon (events reached the batch size, the app started or ended, a user logged in).
    /// Never blocks; triggers that come while an upload runs are merged. It does not cut a backoff or a pause short.
    package func trigger() {
        feed { $0.trigger(at: $1) }
    }

    /// How many times ``trigger()`` has been called: a test compares it before and after something that must not
    /// ask for an upload (the count moves inside the call, so no later reaction of the uploader is needed to see it).
    package var triggerCount: Int {
        state.withLock { $0.machine.triggers }
    }

    /// Turns the ``UploadConfiguration/flushInterval`` trigger off or on: uploads run on the interval only
    /// while the app is started (the end's upload runs in the host's background window, and a suspended
    /// app must not be woken for it). A program with no lifecycle source keeps it on. Other triggers are
    /// unaffected; turning it on asks for an upload, as a start does.
    package func setIntervalActive(_ active: Bool) {
        feed { $0.setIntervalActive(active, at: $1) }
    }

    /// Replaces the token; a pause for authorization ends and uploads resume.
    package func setToken(_ token: String?) {
        feed { $0.setToken(token, at: $1) }
    }

    /// Sends everything pending now and returns what happened, waiting at most `timeout` (nil: until done).
    ///
    /// A flush cuts a backoff short (one attempt) and ends a pause for authorization; it does not override a
    /// `Retry-After` pause or the upload policy. The log's records are sealed and sent, so call the tracker's
    /// flush (which first stores what was tracked) rather than this from an app.
    public func flush(timeout: Duration? = nil) async -> UploadResult {
        let before = counters
        let answer = Promise<PendingReason?>()
        let accepted = feed { machine, now in
            let (generation, actions) = machine.requestFlush(at: now)
            return (actions, generation.map { generation in { (d: inout Driver) in d.flushes.append((generation, answer)) } })
        }
        guard accepted else { return result(since: before, reason: .stopped) }
        let reason: PendingReason?
        if let timeout {
            let clock = configuration.clock
            reason = await answer.value(orAfter: timeout, .timedOut, clock: clock)
        } else {
            reason = await answer.value
        }
        return result(since: before, reason: reason)
    }

    /// Triggers as ``trigger()`` does (so no backoff or pause is cut short) and returns true once the uploader
    /// has nothing in progress after that trigger (no request on the wire, no storage step pending), or has
    /// stopped; false if that took longer than `timeout` of real time.
    ///
    /// Whatever the uploader does in reaction to what happened before the call (a trigger, a clock step, an
    /// answer) has happened by then, and the timer it wants is armed: a test awaits this before checking that
    /// something did *not* happen.
    package func nextPass(timeout: Duration) async -> Bool {
        let passed = Promise<Bool>()
        let accepted = feed { machine, now in
            let (generation, actions) = machine.requestPass(at: now)
            return (actions, generation.map { generation in { (d: inout Driver) in d.passes.append((generation, passed)) } })
        }
        guard accepted else { return true }
        return await passed.value(orAfter: timeout, false)
    }

    /// Stops: requests in flight are abandoned (their batches stay in the outbox and go again at the next launch,
    /// with the same ids), and waiting flushes return ``PendingReason/stopped``. Returns once the storage steps
    /// already begun are over, which does not wait for the network.
    public func stop() async {
        await beginStop()?.value
    }

    /// Starts stopping without waiting (for `deinit` and other synchronous paths); the task ends when ``stop()``
    /// would return.
    @discardableResult
    package func beginStop() -> Task<Void, Never>? {
        let drained = Promise<Void>()
        var waited = drained
        feed { machine, now in
            (machine.stop(at: now), { (d: inout Driver) in
                if let earlier = d.drained { waited = earlier } else { d.drained = drained }
            })
        }
        // Requests are abandoned at once, not after the storage steps queued before the stop.
        abandonRequests()
        configuration.networkMonitor?.stop()
        let waiting = waited
        return Task { await waiting.value }
    }

    /// What the uploader has counted so far.
    public var counters: UploadCounters { state.withLock { $0.machine.counters } }

    /// Sets what is asked before each batch is fetched or sent (a tracker sharing its storage directory with other
    /// processes learns of their opt-out or erasure this way even when it tracks nothing). On
    /// ``UploadPermission/optedOut`` consent is withheld, as ``setConsent(granted:)`` does; on
    /// ``UploadPermission/waitForErasure`` nothing goes now, and consent stands.
    package func setConsentProbe(_ permission: (@Sendable () -> UploadPermission)?) {
        consentProbe.withLock { $0.permission = permission }
    }

    /// The user's consent: while withheld (they opted out) nothing is sealed or sent, whatever triggers an upload;
    /// granting it again starts an upload of what waits.
    package func setConsent(granted: Bool) {
        feed { $0.setConsent(granted: granted, at: $1) }
    }

    /// A network change from the monitor: the policy sees the new status, and a network that is back cuts the
    /// backoff short.
    package func networkChanged(_ status: NetworkStatus) {
        feed { $0.networkChanged(status, at: $1) }
    }

    // MARK: - Feeding the machine

    private func now() -> UploadInstant {
        UploadInstant(monotonic: configuration.clock.now(), wall: configuration.clock.wallMilliseconds())
    }

    /// Gives the machine one input under the lock and queues the actions it returns.
    private func feed(_ input: (inout UploadStateMachine, UploadInstant) -> [Action]) {
        feed { machine, now in (input(&machine, now), nil) }
    }

    /// Gives the machine one input under the lock, queues its actions and runs `also` (the caller's bookkeeping)
    /// under the same lock; starts the performing task if none runs. Returns whether `also` was given.
    @discardableResult
    private func feed(_ input: (inout UploadStateMachine, UploadInstant) -> ([Action], ((inout Driver) -> Void)?)) -> Bool {
        let now = now()
        let (start, accepted, drained) = state.withLock { d -> (Bool, Bool, Promise<Void>?) in
            let (actions, also) = input(&d.machine, now)
            also?(&d)
            d.queue += actions
            if d.performing { return (false, also != nil, nil) }
            if d.queue.isEmpty {
                defer { d.drained = nil }
                return (false, also != nil, d.drained)
            }
            d.performing = true
            return (true, also != nil, nil)
        }
        drained?.fulfil(())
        if start { _ = Self.spawn(executor) { [self] in performQueue() } }
        return accepted
    }

    /// Performs queued actions in order until none is left.
    private func performQueue() {
        while true {
            let (next, drained) = state.withLock { d -> (Action?, Promise<Void>?) in
                guard !d.queue.isEmpty else {
                    d.performing = false
                    defer { d.drained = nil }
                    return (nil, d.drained)
                }
                return (d.queue.removeFirst(), nil)
            }
            guard let next else {
                drained?.fulfil(())
                return
            }
            perform(next)
        }
    }

    private func perform(_ action: Action) {
        switch action {
        case .fetchBatch:
            fetchBatch()
        case .send(let batch, let retry, let token):
            send(batch, retry: retry, token: token)
        case .release(let batch):
            do {
                try log.release(batch.id)
                feed { $0.released(batch.id, at: $1) }
            } catch {
                if error.kind != .closed {
                    logger.error("spoor: a delivered batch cannot be released", metadata: ["batch": "\(batch.id)", "error": "\(error)"])
                }
                feed { $0.storageFailed(batch.id, reason: error.description, closed: error.kind == .closed, at: $1) }
            }
        case .setAside(let batch, let status, let reason):
            setAside(batch, status: status, reason: reason)
        case .split(let batch, let reason):
            split(batch, reason: reason)
        case .scheduleTimer(let deadline):
            scheduleTimer(deadline)
        case .cancelRequests:
            abandonRequests()
        case .completeFlushes(let generation, let reason):
            let ready = state.withLock { d in
                defer { d.flushes.removeAll { $0.generation <= generation } }
                return d.flushes.filter { $0.generation <= generation }.map(\.waiter)
            }
            for waiter in ready { waiter.fulfil(reason) }
        case .completePasses(let generation):
            let ready = state.withLock { d in
                defer { d.passes.removeAll { $0.generation <= generation } }
                return d.passes.filter { $0.generation <= generation }.map(\.waiter)
            }
            for waiter in ready { waiter.fulfil(true) }
        case .persistCounters(let counters):
            saveCounters(counters)
        case .report(let attempt):
            configuration.onAttempt?(attempt)
        case .notice(let notice):
            log(notice)
        }
    }

    // MARK: - Performing actions

    /// Ends every request on the wire as cancelled (their batches stay in the outbox).
    private func abandonRequests() {
        let requests = state.withLock { d in
            defer { d.requests = [:] }
            return Array(d.requests.values)
        }
        for request in requests { request.fulfil(.failure(HTTPClientError(.cancelled, reason: "the uploader is stopping"))) }
    }

    /// The oldest outbox batch the machine does not hold, else a newly sealed one.
    private func fetchBatch() {
        let (held, stopped) = state.withLock { ($0.machine.heldBatchIDs, $0.machine.isStopped) }
        if stopped { return }
        switch permission() {
        case .allowed:
            break
        case .optedOut:
            // The user opted out since consent was last given here (in another process sharing the storage
            // directory): nothing more is fetched or claimed.
            setConsent(granted: false)
            feed { $0.batchFetched(nil, at: $1) }
            return
        case .waitForErasure:
            feed { $0.batchFetched(nil, at: $1) }
            return
        }
        do {
            if let next = log.pendingBatches().first(where: { !held.contains($0.id) }) {
                feed { $0.batchFetched(next, at: $1) }
                return
            }
            // Nothing of its own waits sealed: batches other processes sharing the storage directory left (a
            // process that is gone, or one that does not upload) go before new records are sealed.
            if log.claimFromOthers(limit: configuration.maxBatchesInFlight) > 0,
               let next = log.pendingBatches().first(where: { !held.contains($0.id) }) {
                feed { $0.batchFetched(next, at: $1) }
                return
            }
            let sealed = try log.seal(maxRecords: configuration.batchSize, maxBytes: configuration.maxBatchBytes,
                                      codec: configuration.codec)
            feed { $0.batchFetched(sealed, at: $1) }
        } catch {
            // A full outbox is the window's business: what it holds goes first.
            if error.kind == .outboxFull {
                feed { $0.batchFetched(nil, at: $1) }
                return
            }
            if error.kind != .closed { logger.error("spoor: cannot read a batch to upload", metadata: ["error": "\(error)"]) }
            feed { $0.storageFailed(nil, reason: error.description, closed: error.kind == .closed, at: $1) }
        }
    }

    /// Reads the batch's frame and sends it in a task of its own; the answer goes back to the machine.
    private func send(_ batch: SealedBatch, retry: Int, token: String?) {
        // A batch fetched earlier (one waiting for its retry) is asked about too: the user may have opted out, or
        // asked for the stored data to be erased, since.
        let allowed = permission()
        guard allowed == .allowed else {
            if allowed == .optedOut { setConsent(granted: false) }
            let error = HTTPClientError(.cancelled, reason: "not sent: the user opted out or an erasure is under way")
            feed { $0.answered(batch.id, .failed(error), at: $1) }
            return
        }
        let frame: [UInt8]
        do {
            frame = try log.frame(of: batch.id)
        } catch {
            if error.kind == .unknownBatch {
                feed { $0.batchVanished(batch.id, at: $1) }
            } else {
                if error.kind != .closed { logger.error("spoor: cannot read a batch to upload", metadata: ["error": "\(error)"]) }
                feed { $0.storageFailed(batch.id, reason: error.description, closed: error.kind == .closed, at: $1) }
            }
            return
        }
        var headers: [(name: String, value: String)] = [
            ("Content-Type", BatchFrame.mediaType),
            ("User-Agent", configuration.userAgent),
            ("Spoor-Batch-Id", batch.id.description),
        ]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if retry > 0 { headers.append(("Spoor-Retry-Count", "\(retry)")) }
        let request = HTTPRequest(url: configuration.url, headers: headers, body: frame, timeout: configuration.requestTimeout)
        let outcome = Promise<Result<HTTPResponse, HTTPClientError>>()
        let stopped = state.withLock { d -> Bool in
            // A send queued before a stop does not go out after it.
            guard !d.machine.isStopped else { return true }
            d.requests[batch.id] = outcome
            return false
        }
        if stopped { return }
        _ = Self.spawn(executor) { [self] in
            let answer: UploadStateMachine.Answer
            switch await perform(request, outcome: outcome) {
            case .success(let response):
                answer = .response(status: response.status, retryAfter: response.header("Retry-After"),
                                   duplicate: Self.isDuplicate(response), reason: Self.reason(response))
            case .failure(let error):
                answer = .failed(error)
            }
            state.withLock { _ = $0.requests.removeValue(forKey: batch.id) }
            feed { $0.answered(batch.id, answer, at: $1) }
        }
    }

    /// Sends `request`, giving up at the timeout (on the injected clock) or when `outcome` is fulfilled by a stop.
    private func perform(_ request: HTTPRequest, outcome: Promise<Result<HTTPResponse, HTTPClientError>>) async
        -> Result<HTTPResponse, HTTPClientError>
    {
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
            clock: clock, spawn: { Self.spawn(executor, $0) })
        if case .failure = result {
            // An answer leaves nothing to cancel. After a timeout, a stop or a failure, the request is cancelled on
            // a thread of its own: cancelling runs the HTTP client's cancellation on the calling thread, and
            // FoundationNetworking's can block there; this executor runs every upload and must never stall.
            Thread.detachNewThread { sending.cancel() }
        }
        return result
    }

    /// A 413: the batch goes again as two halves; one that cannot be split is set aside.
    private func split(_ batch: SealedBatch, reason: String) {
        let halves: [[UInt8]]
        do {
            let frame = try log.frame(of: batch.id)
            do {
                guard let made = try BatchSplit.halves(of: frame) else {
                    feed { $0.splitImpossible(batch.id, reason: "a single event is too large: \(reason)", at: $1) }
                    return
                }
                halves = made
            } catch {
                feed { $0.splitImpossible(batch.id, reason: "too large, and cannot be split: \(error)", at: $1) }
                return
            }
            let parts = try log.replace(batch.id, withFrames: halves)
            logger.notice("spoor: the collector found a batch too large; it is sent again in two halves", metadata: [
                "batch": "\(batch.id)", "parts": "\(parts.map { "\($0.id) (\($0.recordCount))" }.joined(separator: ", "))",
            ])
            feed { $0.split(batch.id, into: parts, at: $1) }
        } catch {
            if error.kind != .closed { logger.error("spoor: cannot split a batch", metadata: ["batch": "\(batch.id)", "error": "\(error)"]) }
            feed { $0.storageFailed(batch.id, reason: error.description, closed: error.kind == .closed, at: $1) }
        }
    }

    /// Moves a refused batch to the rejected area and removes it from the outbox.
    private func setAside(_ batch: SealedBatch, status: Int, reason: String) {
        do {
            let frame = try log.frame(of: batch.id)
            let dropped = try rejected.setAside(frame: frame, id: batch.id, status: status, at: configuration.clock.wallMilliseconds(),
                                                durable: log.configuration.durability != .none)
            try log.discard(batch.id)
            logger.error("spoor: the collector refused a batch; it is set aside in the rejected area", metadata: [
                "batch": "\(batch.id)", "events": "\(batch.recordCount)", "status": "\(status)", "reason": "\(reason)",
            ])
            feed { $0.setAside(batch.id, dropped: dropped.count, at: $1) }
        } catch {
            if error.kind != .closed {
                logger.error("spoor: cannot set a refused batch aside", metadata: ["batch": "\(batch.id)", "error": "\(error)"])
            }
            feed { $0.storageFailed(batch.id, reason: error.description, closed: error.kind == .closed, at: $1) }
        }
    }

    /// Replaces the timer: a task that sleeps on the clock until `deadline`, then tells the machine.
    private func scheduleTimer(_ deadline: Duration?) {
        let (previous, generation) = state.withLock { d -> (Task<Void, Never>?, Int) in
            d.timerGeneration += 1
            defer { d.timer = nil }
            return (d.timer, d.timerGeneration)
        }
        previous?.cancel()
        guard let deadline else { return }
        let clock = configuration.clock
        let task = Self.spawn(executor) { [weak self] in
            do {
                try await clock.sleep(for: max(.zero, deadline - clock.now()))
            } catch {
                return
            }
            guard let self else { return }
            let current = state.withLock { $0.timerGeneration == generation }
            if current { feed { $0.timerFired(at: $1) } }
        }
        let stale = state.withLock { d -> Bool in
            if d.timerGeneration == generation { d.timer = task; return false }
            return true
        }
        if stale { task.cancel() }
    }

    private func log(_ notice: UploadStateMachine.Notice) {
        switch notice {
        case .failing(let batch, let error, let status):
            logger.warning("spoor: an upload failed; the batch is kept and retried with backoff", metadata: [
                "batch": "\(batch)", "error": "\(error)", "status": "\(status.map(String.init) ?? "none")",
            ])
        case .recovered(let status):
            logger.notice("spoor: uploads succeed again", metadata: ["status": "\(status)"])
        case .authorizationRefused(let status, let reason):
            logger.error("spoor: the collector refused the credentials; uploads are paused until a new token, flush() or a new launch",
                         metadata: ["status": "\(status)", "reason": "\(reason)"])
        case .resumedByToken:
            logger.notice("spoor: a new token was set; uploads resume")
        case .resumedByFlush:
            logger.notice("spoor: flush() resumes uploads paused for authorization")
        case .waitingForPolicy(let name):
            logger.info("spoor: uploads wait for the upload policy", metadata: ["policy": "\(name)"])
        case .pausedByServer(let until):
            logger.warning("spoor: the collector asked for a pause; uploads resume later", metadata: ["until": "\(until)"])
        }
    }

    // MARK: - Bookkeeping

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
    private func saveCounters(_ counters: UploadCounters) {
        guard let data = try? JSONEncoder().encode(counters) else { return }
        let directory = log.directory.standardizedFileURL.path
        try? AtomicFile.write(Array(data), to: directory + "/" + Self.countersFileName, durable: false)
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
    package static func savedCounters(logDirectory: URL) -> UploadCounters? {
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
