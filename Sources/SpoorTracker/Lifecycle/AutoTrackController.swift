import Dispatch
import Foundation
internal import Logging
internal import SpoorModel

/// What auto-tracking needs from the tracker. ``Tracker`` implements it with its internal entry points;
/// tests use a recording fake.
protocol AutoTrackSink: AnyObject, Sendable {
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
struct LifecycleOptions: Sendable {
    /// The tracker's storage directory: the checkpoint and the crash marker live there.
    var storageDirectory: URL
    /// The auto events that are emitted; the machinery behind the others keeps running (§6).
    var enabled: Set<AutoTrackEventKind> = Set(AutoTrackEventKind.allCases)
    /// Pages and clicks left out.
    var ignore = AutoTrackIgnoreList()
    /// How often the checkpoint's last-alive time is refreshed while started; `nil` for never (manual
    /// clocks drive `heartbeat()` themselves).
    var heartbeatInterval: Duration? = .seconds(5)
    /// The longest `willTerminate` waits for events to become durable (L9).
    var terminateTimeout: Duration = .seconds(2)
}

/// Runs auto-tracking: feeds signals, page and click calls into the engine and carries out its effects
/// on the tracker (the sink), the checkpoint and the heartbeat. Thread-safe; calls are applied in order.
package final class AutoTrackController: @unchecked Sendable {
    private let lock = NSLock()
    private var engine: AutoTrackEngine
    private let options: LifecycleOptions
    private weak var sink: (any AutoTrackSink)?
    private let now: @Sendable () -> LifecycleInstant
    private let checkpoints: LifecycleCheckpointStore
    private var crashMarker: CrashMarker?
    private var heartbeatTimer: (any DispatchSourceTimer)?
    private let logger = Logger(label: "spoor.lifecycle")
    private var recovered = false
    /// Set by ``shutdown()``: later signals, pages and clicks change nothing (the log is closed, and a
    /// session opened now could never be paired).
    private var isShutDown = false
    /// Attached sources, kept alive as long as the tracker.
    private var sources: [any LifecycleSource] = []

    /// Checkpoints that could not be read or written.
    private(set) var checkpointErrorCount = 0

    /// Creates the controller; nothing happens until ``connect(_:isFirstLaunch:)``.
    init(options: LifecycleOptions, now: @escaping @Sendable () -> LifecycleInstant) {
        self.options = options
        self.now = now
        engine = AutoTrackEngine(isFirstLaunch: false, ignore: options.ignore)
        checkpoints = LifecycleCheckpointStore(directory: options.storageDirectory)
    }

    deinit {
        heartbeatTimer?.cancel()
    }

    /// The lifecycle state.
    var state: LifecycleState { lock.withLock { engine.state } }

    /// Whether this process is the install's first launch (`$is_first_time`).
    var isFirstLaunch: Bool { lock.withLock { engine.isFirstLaunch } }

    /// Connects the tracker (held weakly: it owns the controller), emits what the previous process left
    /// unsaid (L10) and opens this process's crash marker. Call once, before the first signal; later
    /// calls do nothing.
    func connect(_ sink: any AutoTrackSink, isFirstLaunch: Bool) {
        lock.withLock {
            guard !recovered else { return }
            recovered = true
            self.sink = sink
            engine = AutoTrackEngine(isFirstLaunch: isFirstLaunch, ignore: options.ignore)
            var checkpoint: LifecycleCheckpoint?
            switch checkpoints.load() {
            case .success(let loaded):
                checkpoint = loaded
            case .failure(let error):
                checkpointErrorCount += 1
                logger.warning("\(error.description); nothing to recover")
            }
            let crash = CrashMarker.readPrevious(in: options.storageDirectory)
            apply(CrashRecovery.effects(checkpoint: checkpoint, crash: crash))
            // The recovered events are in the log: only now forget the previous process.
            saveCheckpoint(at: now())
            crashMarker = CrashMarker(directory: options.storageDirectory)
            if crashMarker == nil { logger.warning("cannot open the crash marker; crashes go unrecorded") }
        }
    }

    /// Installs the fatal-signal handler that records crashes in this tracker's marker.
    func installCrashHandler() {
        lock.withLock {
            if let crashMarker { CrashSignalHandler.install(marker: crashMarker) }
        }
    }

    /// Applies a lifecycle signal.
    func handle(_ signal: LifecycleSignal) {
        lock.withLock {
            guard !isShutDown else { return }
            let instant = now()
            apply(engine.handle(signal, now: instant), at: instant)
            updateHeartbeat()
        }
    }

    /// Consent changed: see ``AutoTrackEngine/consentChanged(optedOut:now:)``.
    func setQuiet(_ quiet: Bool) {
        lock.withLock {
            guard !isShutDown else { return }
            let instant = now()
            apply(engine.consentChanged(optedOut: quiet, now: instant), at: instant)
        }
    }

    /// The tracker shuts down: the open session ends (pages left, `$AppEnd`) and the heartbeat stops.
    func shutdown() {
        lock.withLock {
            guard !isShutDown else { return }
            isShutDown = true
            let instant = now()
            apply(engine.shutdown(now: instant), at: instant)
            heartbeatTimer?.cancel()
            heartbeatTimer = nil
        }
    }

    /// A page appears.
    func pageAppear(id: String, info: PageInfo) {
        lock.withLock {
            guard !isShutDown else { return }
            let instant = now()
            apply(engine.pageAppear(id: id, info: info, now: instant), at: instant)
        }
    }

    /// A page disappears. With `lastSeen`, the page was found gone after the fact: its leave is timed (and
    /// its duration ends) at that earlier instant, the last one it was known to be visible.
    func pageDisappear(id: String, lastSeen: LifecycleInstant? = nil) {
        lock.withLock {
            guard !isShutDown else { return }
            let instant = now()
            var effects = engine.pageDisappear(id: id, now: lastSeen ?? instant)
            if let lastSeen {
                effects = effects.map { effect in
                    guard case .emit(let kind, let properties, nil) = effect else { return effect }
                    return .emit(kind, properties, time: lastSeen.wall)
                }
            }
            apply(effects, at: instant)
        }
    }

    /// A click on the current page.
    func click(_ click: AppClick) {
        lock.withLock {
            guard !isShutDown else { return }
            let instant = now()
            apply(engine.click(click, now: instant), at: instant)
        }
    }

    /// Refreshes the checkpoint's last-alive time while a session is open. The heartbeat timer calls it;
    /// with a manual clock the host (or `spoor simulate`) calls it.
    func heartbeat() {
        lock.withLock {
            guard engine.state == .started else { return }
            saveCheckpoint(at: now())
        }
    }

    /// Records a crash with `reason` at the clock's time, exactly as the fatal-signal handler would. After
    /// it the process is expected to die.
    func recordCrash(reason: String) {
        lock.withLock {
            crashMarker.map { $0.record(reason: reason, time: now().wall) }
        }
    }

    /// Keeps an attached source alive as long as the tracker.
    func retain(_ source: any LifecycleSource) {
        lock.withLock { sources.append(source) }
    }

    /// Stops the heartbeat (the process is going away or the tracker is being replaced).
    package func stopHeartbeat() {
        lock.withLock {
            heartbeatTimer?.cancel()
            heartbeatTimer = nil
        }
    }

    // MARK: - Effects (called with the lock held)

    private func apply(_ effects: [AutoTrackEffect], at instant: LifecycleInstant? = nil) {
        for effect in effects {
            switch effect {
            case .emit(let kind, let properties, let time):
                guard options.enabled.contains(kind) else { continue }
                sink?.trackAutomatic(kind.eventName, properties: properties, at: time)
            case .pauseTimers:
                // Timers pause exactly when the app leaves the started state, and so does the flush interval.
                sink?.pauseAllTimers(at: instant?.monotonic)
                sink?.appStartedChanged(false)
            case .resumeTimers:
                sink?.resumeAllTimers(at: instant?.monotonic)
                sink?.appStartedChanged(true)
            case .flush:
                sink?.requestFlush()
            case .syncDurably:
                if sink?.flushAndWait(timeout: options.terminateTimeout) == false {
                    logger.warning("willTerminate: events not durable within \(options.terminateTimeout)")
                }
            case .checkpoint:
                saveCheckpoint(at: instant ?? now())
            }
        }
    }

    private func saveCheckpoint(at instant: LifecycleInstant) {
        do {
            try checkpoints.save(engine.checkpoint(lastAlive: instant))
        } catch {
            checkpointErrorCount += 1
            logger.warning("cannot save the lifecycle checkpoint: \(error)")
        }
    }

    private func updateHeartbeat() {
        guard let interval = options.heartbeatInterval else { return }
        if engine.state == .started {
            guard heartbeatTimer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            let nanoseconds = Int(interval.components.seconds) * 1_000_000_000
                + Int(interval.components.attoseconds / 1_000_000_000)
            timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
            timer.setEventHandler { [weak self] in self?.heartbeat() }
            timer.resume()
            heartbeatTimer = timer
        } else {
            heartbeatTimer?.cancel()
            heartbeatTimer = nil
        }
    }
}
