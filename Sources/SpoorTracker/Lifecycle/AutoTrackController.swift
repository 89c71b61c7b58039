import Dispatch
package import Foundation
package import SpoorSystem
internal import Logging
internal import SpoorModel
internal import SpoorLog

/// What auto-tracking needs from the tracker. ``Tracker`` implements it with its internal entry points;
/// tests use a recording fake.
package protocol AutoTrackSink: AnyObject, Sendable {
    /// Tracks an auto event through the tracker's normal path (super properties, identity, the log).
    /// `time`, when given, replaces the clock's wall time (recovered events are timed to the past).
    @discardableResult
    func trackAutomatic(_ name: String, properties: Properties, at time: EpochMilliseconds?) -> Bool
    /// Pauses every running event timer at monotonic `now`.
    func pauseAllTimers(at now: UInt64?)
    /// Resumes the timers `pauseAllTimers` paused, at monotonic `now`.
    func resumeAllTimers(at now: UInt64?)
    /// Starts storing and syncing what was tracked, without waiting.
    func requestFlush()
    /// The app started (`true`) or ended (`false`): the upload's flush interval runs only while started.
    func appStartedChanged(_ started: Bool)
    /// Makes everything tracked so far durable, waiting at most `timeout`; whether it finished in time.
    @discardableResult
    func flushAndWait(timeout: Duration) -> Bool
}

/// How the lifecycle machinery is set up.
package struct LifecycleOptions: Sendable {
    /// The tracker's storage directory: where an older Spoor kept the checkpoint and the crash marker.
    package var storageDirectory: URL
    /// This process's log directory, where its checkpoint and crash marker live (its adopter turns them into
    /// events once it is gone); nil for a tracker whose store is not a log: they live in the storage directory.
    package var logDirectory: URL?
    /// Where this process's checkpoint and crash marker are.
    var lifecycleDirectory: URL { logDirectory ?? storageDirectory }
    /// The auto events that are emitted; the machinery behind the others keeps running (a disabled `$AppEnd`
    /// still ends the session, so the next `$AppStart` is a new one).
    package var enabled: Set<AutoTrackEventKind> = Set(AutoTrackEventKind.allCases)
    /// Pages and clicks left out.
    package var ignore: AutoTrackIgnoreList = AutoTrackIgnoreList()
    /// How often the checkpoint's last-alive time is refreshed while started; `nil` for never (manual
    /// clocks drive `heartbeat()` themselves).
    package var heartbeatInterval: Duration? = .seconds(5)
    /// The longest `willTerminate` waits for events to become durable: the system kills an app that takes
    /// too long to terminate, so the wait is bounded.
    var terminateTimeout: Duration = .seconds(2)

    package init(
        storageDirectory: URL,
        enabled: Set<AutoTrackEventKind> = Set(AutoTrackEventKind.allCases),
        ignore: AutoTrackIgnoreList = AutoTrackIgnoreList(),
        heartbeatInterval: Duration? = .seconds(5),
        terminateTimeout: Duration = .seconds(2),
        logDirectory: URL? = nil
    ) {
        self.storageDirectory = storageDirectory
        self.logDirectory = logDirectory
        self.enabled = enabled
        self.ignore = ignore
        self.heartbeatInterval = heartbeatInterval
        self.terminateTimeout = terminateTimeout
    }
}

/// Runs auto-tracking: feeds signals, page and click calls into the engine and carries out its effects
/// on the tracker (the sink), the checkpoint and the heartbeat. Thread-safe; calls are applied in order.
///
/// Each call decides under the state lock (the engine turns the call into actions, queued in call order) and
/// the actions are delivered after it is released (tracker calls, checkpoint writes, a bounded wait at
/// termination). One caller at a time delivers, the queue in order; a call made while another is being
/// delivered queues its actions behind and returns. No lock is held while the tracker runs app code (a dynamic
/// super property provider, `onRejection`), so that code may call the lifecycle again: its call is delivered
/// right after the one it came from.
package final class AutoTrackController: Sendable {
    private struct State {
        var engine: AutoTrackEngine
        /// The tracker, held weakly: it owns the controller.
        weak var sink: (any AutoTrackSink)?
        var recovered = false
        /// Set by ``shutdown()``: later signals, pages and clicks change nothing (the log is closed, and a
        /// session opened now could never be paired).
        var isShutDown = false
        var crashMarker: CrashMarker?
        var heartbeatTimer: (any DispatchSourceTimer)?
        /// Attached sources, kept alive as long as the tracker.
        var sources: [any LifecycleSource] = []
        var checkpointErrorCount = 0
        /// Decided and not yet delivered, in call order.
        var undelivered: [Delivery] = []
        /// The thread delivering `undelivered`, if any: a new call queues behind it.
        var deliverer: ObjectIdentifier?
    }

    /// One call's actions, for its sink; `done` is fulfilled once they are delivered.
    private struct Delivery {
        var actions: [Action]
        var sink: (any AutoTrackSink)?
        var done: Promise<Void>?
    }

    /// An effect, resolved under the lock into what applying it needs.
    private enum Action {
        case emit(String, Properties, time: EpochMilliseconds?)
        case pauseTimers(UInt64?)
        case resumeTimers(UInt64?)
        case flush
        case syncDurably
        case saveCheckpoint(LifecycleCheckpoint)
    }

    private let state: Locked<State>
    private let options: LifecycleOptions
    private let now: @Sendable () -> LifecycleInstant
    private let checkpoints: LifecycleCheckpointStore
    private let logger = Logger(label: "spoor.lifecycle")

    /// Creates the controller; nothing happens until ``connect(_:isFirstLaunch:)``.
    package init(options: LifecycleOptions, now: @escaping @Sendable () -> LifecycleInstant) {
        self.options = options
        self.now = now
        state = Locked(State(engine: AutoTrackEngine(isFirstLaunch: false, ignore: options.ignore)))
        checkpoints = LifecycleCheckpointStore(directory: options.lifecycleDirectory)
    }

    deinit {
        state.withLock { $0.heartbeatTimer?.cancel() }
    }

    /// The lifecycle state.
    package var lifecycleState: LifecycleState { state.withLock { $0.engine.state } }

    /// Whether this process is the install's first launch (`$is_first_time`).
    package var isFirstLaunch: Bool { state.withLock { $0.engine.isFirstLaunch } }

    /// Checkpoints that could not be read or written.
    package var checkpointErrorCount: Int { state.withLock { $0.checkpointErrorCount } }

    /// Connects the tracker (held weakly: it owns the controller), emits what the files found where this process
    /// keeps its own left unsaid (the `$AppEnd` of a session never closed, a crash) and opens this process's crash
    /// marker. Call once, before the first signal; later calls do nothing.
    ///
    /// With a log directory, the files found there are those of an older Spoor, moved from the storage directory
    /// (each by one rename, so of several processes starting at once one takes each), or of a tracker released
    /// earlier in this process over the same log. The events are made durable before this process's own files
    /// replace them. Other processes' files are never read here: whoever adopts a gone process's log turns its
    /// files into events (``AdoptedLifecycle``).
    package func connect(_ sink: any AutoTrackSink, isFirstLaunch: Bool) {
        guard !state.withLock({ $0.recovered }) else { return }
        if let logDirectory = options.logDirectory {
            for name in StorageLayout.lifecycleFileNames {
                let from = options.storageDirectory.appendingPathComponent(name).path
                let to = logDirectory.appendingPathComponent(name).path
                if rename(from, to) != 0, errno != ENOENT {
                    logger.warning("cannot move an older Spoor's \(name) into the log directory: errno \(errno)")
                }
            }
        }
        var checkpoint: LifecycleCheckpoint?
        var unreadable: CheckpointError?
        switch checkpoints.load() {
        case .success(let loaded): checkpoint = loaded
        case .failure(let error): unreadable = error
        }
        let crash = CrashMarker.readPrevious(in: options.lifecycleDirectory)
        // nil: connected before; else whether this caller delivers.
        let deliver = state.withLock { s -> Bool? in
            guard !s.recovered else { return nil }
            s.recovered = true
            if unreadable != nil { s.checkpointErrorCount += 1 }
            s.sink = sink
            s.engine = AutoTrackEngine(isFirstLaunch: isFirstLaunch, ignore: options.ignore)
            // The recovered events go into the log first; only then is the previous process forgotten.
            var effects = CrashRecovery.effects(checkpoint: checkpoint, crash: crash)
            // In a log directory, the files are replaced only once their events are durable.
            if options.logDirectory != nil, !effects.isEmpty { effects.append(.syncDurably) }
            let actions = resolve(effects + [.checkpoint], at: nil, in: &s)
            return queue(Delivery(actions: actions, sink: sink), in: &s)
        }
        guard let deliver else { return }
        if let unreadable { logger.warning("\(unreadable.description); nothing to recover") }
        if deliver { deliverQueued() }
        // This process's marker replaces the previous one's only once its crash has been handed on.
        let marker = CrashMarker(directory: options.lifecycleDirectory)
        if marker == nil { logger.warning("cannot open the crash marker; crashes go unrecorded") }
        state.withLock { $0.crashMarker = marker }
    }

    /// Installs the fatal-signal handler that records crashes in this tracker's marker.
    func installCrashHandler() {
        if let marker = state.withLock({ $0.crashMarker }) { CrashSignalHandler.install(marker: marker) }
    }

    /// Applies a lifecycle signal.
    ///
    /// `willTerminate` returns once its events are durable (at most twice ``LifecycleOptions/terminateTimeout``),
    /// also when another thread delivers them: the app gets no later chance.
    package func handle(_ signal: LifecycleSignal) {
        let terminating = signal == .willTerminate
        let done = perform(reporting: terminating) { s, instant in
            let effects = s.engine.handle(signal, now: instant)
            updateHeartbeat(&s)
            return effects
        }
        // Delivered by another thread: wait for it, bounded (never from the delivering thread, which would wait
        // for itself).
        if terminating, done.current == nil, !isDeliveringOnThisThread {
            _ = done.wait(timeout: options.terminateTimeout * 2)
        }
    }

    /// Consent changed: see ``AutoTrackEngine/consentChanged(optedOut:now:)``. The promise is fulfilled once
    /// the events it decided (the session's end) are delivered.
    @discardableResult
    func setQuiet(_ quiet: Bool) -> Promise<Void> {
        perform(reporting: true) { s, instant in s.engine.consentChanged(optedOut: quiet, now: instant) }
    }

    /// The tracker shuts down: the open session ends (pages left, `$AppEnd`) and the heartbeat stops. The
    /// promise is fulfilled once those events are delivered.
    @discardableResult
    package func shutdown() -> Promise<Void> {
        perform(reporting: true) { s, instant in
            s.isShutDown = true
            s.heartbeatTimer?.cancel()
            s.heartbeatTimer = nil
            return s.engine.shutdown(now: instant)
        }
    }

    /// A page appears.
    package func pageAppear(id: String, info: PageInfo) {
        perform { s, instant in s.engine.pageAppear(id: id, info: info, now: instant) }
    }

    /// A page disappears. With `lastSeen`, the page was found gone after the fact: its leave is timed (and
    /// its duration ends) at that earlier instant, the last one it was known to be visible.
    package func pageDisappear(id: String, lastSeen: LifecycleInstant? = nil) {
        perform { s, instant in
            let effects = s.engine.pageDisappear(id: id, now: lastSeen ?? instant)
            guard let lastSeen else { return effects }
            return effects.map { effect in
                guard case .emit(let kind, let properties, nil) = effect else { return effect }
                return .emit(kind, properties, time: lastSeen.wall)
            }
        }
    }

    /// A click on the current page.
    package func click(_ click: AppClick) {
        perform { s, instant in s.engine.click(click, now: instant) }
    }

    /// Refreshes the checkpoint's last-alive time while a session is open. The heartbeat timer calls it;
    /// with a manual clock the host (or `spoor simulate`) calls it.
    package func heartbeat() {
        let deliver = state.withLock { s -> Bool in
            guard s.engine.state == .started else { return false }
            // Queued like any call's actions, so checkpoints are written in the order they were taken.
            return queue(Delivery(actions: [.saveCheckpoint(s.engine.checkpoint(lastAlive: now()))], sink: nil), in: &s)
        }
        if deliver { deliverQueued() }
    }

    /// Records a crash with `reason` at the clock's time, exactly as the fatal-signal handler would. After
    /// it the process is expected to die.
    package func recordCrash(reason: String) {
        let marker = state.withLock { $0.crashMarker }
        marker?.record(reason: reason, time: now().wall)
    }

    /// Keeps an attached source alive as long as the tracker.
    func retain(_ source: any LifecycleSource) {
        state.withLock { $0.sources.append(source) }
    }

    /// Stops the heartbeat (the process is going away or the tracker is being replaced).
    package func stopHeartbeat() {
        state.withLock { s in
            s.heartbeatTimer?.cancel()
            s.heartbeatTimer = nil
        }
    }

    // MARK: - Deciding and acting

    /// Decides what a call does under the state lock and queues it; then, unless another caller is delivering
    /// (it delivers this call too, in order), delivers the queue outside the lock. With `reporting`, the promise
    /// is fulfilled once this call's actions are delivered (at once when there are none).
    @discardableResult
    private func perform(
        reporting: Bool = false, _ decide: (inout State, LifecycleInstant) -> [AutoTrackEffect]
    ) -> Promise<Void> {
        let done = Promise<Void>()
        let decided = state.withLock { s -> Bool? in
            guard !s.isShutDown else { return nil }
            let instant = now()
            let actions = resolve(decide(&s, instant), at: instant, in: &s)
            return queue(Delivery(actions: actions, sink: s.sink, done: reporting ? done : nil), in: &s)
        }
        switch decided {
        case nil: done.fulfil(())  // after the shutdown: nothing to deliver
        case true?: deliverQueued()
        case false?: break
        }
        return done
    }

    /// Queues `delivery`; returns whether the caller is to deliver the queue (nobody is delivering).
    private func queue(_ delivery: Delivery, in s: inout State) -> Bool {
        s.undelivered.append(delivery)
        guard s.deliverer == nil else { return false }
        s.deliverer = ObjectIdentifier(Thread.current)
        return true
    }

    /// Whether the calling thread is the one delivering (a call from app code the delivery runs).
    private var isDeliveringOnThisThread: Bool {
        state.withLock { $0.deliverer == ObjectIdentifier(Thread.current) }
    }

    /// Delivers the queue, call by call, until it is empty; no lock is held while a call's actions run.
    private func deliverQueued() {
        while true {
            let next = state.withLock { s -> [Delivery] in
                let next = s.undelivered
                s.undelivered = []
                if next.isEmpty { s.deliverer = nil }
                return next
            }
            if next.isEmpty { return }
            for delivery in next {
                apply(delivery.actions, to: delivery.sink)
                delivery.done?.fulfil(())
            }
        }
    }

    /// Turns effects into actions: drops disabled events and takes the checkpoint's contents now, while the
    /// engine is in the state the effects came from.
    private func resolve(_ effects: [AutoTrackEffect], at instant: LifecycleInstant?, in s: inout State) -> [Action] {
        effects.compactMap { effect -> Action? in
            switch effect {
            case .emit(let kind, let properties, let time):
                return options.enabled.contains(kind) ? .emit(kind.eventName, properties, time: time) : nil
            case .pauseTimers: return .pauseTimers(instant?.monotonic)
            case .resumeTimers: return .resumeTimers(instant?.monotonic)
            case .flush: return .flush
            case .syncDurably: return .syncDurably
            case .checkpoint: return .saveCheckpoint(s.engine.checkpoint(lastAlive: instant ?? now()))
            }
        }
    }

    private func apply(_ actions: [Action], to sink: (any AutoTrackSink)?) {
        for action in actions {
            switch action {
            case .emit(let name, let properties, let time):
                sink?.trackAutomatic(name, properties: properties, at: time)
            case .pauseTimers(let monotonic):
                // Timers pause exactly when the app leaves the started state, and so does the flush interval.
                sink?.pauseAllTimers(at: monotonic)
                sink?.appStartedChanged(false)
            case .resumeTimers(let monotonic):
                sink?.resumeAllTimers(at: monotonic)
                sink?.appStartedChanged(true)
            case .flush:
                sink?.requestFlush()
            case .syncDurably:
                if sink?.flushAndWait(timeout: options.terminateTimeout) == false {
                    logger.warning("willTerminate: events not durable within \(options.terminateTimeout)")
                }
            case .saveCheckpoint(let checkpoint):
                save(checkpoint)
            }
        }
    }

    private func save(_ checkpoint: LifecycleCheckpoint) {
        var checkpoint = checkpoint
        checkpoint.enabled = options.enabled.map(\.rawValue).sorted()
        do {
            try checkpoints.save(checkpoint)
        } catch {
            noteCheckpointError()
            logger.warning("cannot save the lifecycle checkpoint: \(error)")
        }
    }

    private func noteCheckpointError() {
        state.withLock { $0.checkpointErrorCount += 1 }
    }

    /// Starts the heartbeat while the app is started and stops it otherwise (a timer is cheap to set up: no I/O).
    private func updateHeartbeat(_ s: inout State) {
        guard let interval = options.heartbeatInterval else { return }
        if s.engine.state == .started {
            guard s.heartbeatTimer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            let nanoseconds = Int(interval.nanoseconds)
            timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
            timer.setEventHandler { [weak self] in self?.heartbeat() }
            timer.resume()
            s.heartbeatTimer = timer
        } else {
            s.heartbeatTimer?.cancel()
            s.heartbeatTimer = nil
        }
    }
}
