public import Foundation
import Logging
public import SpoorModel
import SpoorLog
public import SpoorUpload
package import SpoorSystem

/// The tracker: the API an app calls to record events, identity and profiles.
///
/// ```swift
/// let tracker = try Tracker(configuration: Configuration(storageDirectory: directory))
/// tracker.registerSuperProperties(["plan": "pro"])
/// tracker.login("user-42")
/// tracker.track("BuyProduct", properties: ["product": "tea", "price": 3.5])
/// await tracker.shutdown()
/// ```
///
/// Every method is safe to call from any thread or task at once. `track` is cheap: it captures the time,
/// the identity and super-property snapshot and the properties, checks them, and hands the event to a
/// writer thread that merges, encodes and stores it.
public final class Tracker: Sendable {
    /// The configuration the tracker was created with.
    public let configuration: Configuration
    package let pipeline: EventPipeline
    let logger: Logger
    /// The one clock (``Configuration``'s, the system's unless a test set one): event `time` from its wall
    /// reading, durations from its monotonic one.
    package let clock: any SpoorClock
    private let rejections = Locked<[ValidationRule: Int]>([:])
    private let timers = Locked(EventTimers())
    private let corruptStateFiles: Int
    /// Auto-tracking: the lifecycle state machine, pages, clicks and crash recovery (Lifecycle/).
    package let lifecycle: AutoTrackController
    /// Ships sealed batches to ``Configuration/Upload/serverURL``; nil when none is set (or the store is not the log).
    package let uploader: Uploader?
    /// The host's background-task hook, taken from the lifecycle source (see ``BackgroundTaskHook``).
    let backgroundTask = Locked<BackgroundTaskHook?>(nil)

    /// Creates a tracker, loading its state from the storage directory (and creating both when missing).
    ///
    /// - Throws: ``ConfigurationError`` naming the first invalid field, or `storageDirectory` when it cannot be used.
    public convenience init(configuration: Configuration) throws(ConfigurationError) {
        try configuration.validate()
        try Self.prepareStorage(configuration)
        // A released tracker's writer may still be finishing with this directory's log: its open store is taken
        // over rather than waited for (its writer ends on its own thread, this tracker's writer starts after it).
        if let release = ReleasedTrackers.take(configuration.storageDirectory) {
            try self.init(configuration: configuration, store: release.store, inheriting: release)
        } else {
            let store = try EventLogStore(storageDirectory: configuration.storageDirectory, configuration: configuration)
            try self.init(configuration: configuration, store: store)
        }
    }

    /// A tracker on `store` (SpoorTesting's `InMemoryEventStore` reaches it through a public initializer).
    package convenience init(configuration: Configuration, store: any EventStore) throws(ConfigurationError) {
        try self.init(configuration: configuration, store: store, inheriting: nil)
    }

    /// A tracker on `store`. With `release`, `store` is the one a released tracker left open: its state is
    /// taken from there (newer than the file), and the writer starts once the released one has ended.
    private init(configuration: Configuration, store: any EventStore, inheriting release: ReleasedTrackers.Release?)
        throws(ConfigurationError)
    {
        do throws(ConfigurationError) {
            try configuration.validate()
            try Self.prepareStorage(configuration)
        } catch {
            if let release { Self.close(release, logger: configuration.diagnostics.logger) }
            throw error
        }
        self.configuration = configuration
        logger = configuration.diagnostics.logger
        clock = configuration.testSeams.clock

        let now = clock.wallMilliseconds()
        let days = CalendarDay(timeZone: configuration.tracking.timeZone)
        let stateFile = PersistentStateFile(directory: configuration.storageDirectory)
        // The change count first: a change made while the file is read is then seen at the first event.
        let generation = stateFile.generation
        let (state, outcome, saved) = release.map { ($0.state, PersistentStateFile.LoadOutcome.loaded, true) }
            ?? stateFile.load(today: days.name(of: now), optedOut: configuration.tracking.startsOptedOut)
        var corrupt = 0
        if case .replacedCorrupt(let reason) = outcome {
            corrupt = 1
            logger.error(
                "spoor: the state file was corrupt; it was moved aside and replaced",
                metadata: ["path": "\(stateFile.url.path)", "reason": "\(reason)"])
        }
        corruptStateFiles = corrupt
        // The log was made (its owner written) before the state was read: an erasure made by another process in
        // between is one this new log has nothing of, so it counts as followed (else no process would claim its
        // batches, and its adopter would erase what it records from now on).
        if release == nil, let log = store.durableLog, log.shared != nil,
           SharedLogArea.erasuresFollowed(log.directory.path) < state.deletions {
            log.noteErasuresFollowed(state.deletions)
        }
        // An older Spoor saved the sequence number only now and then: a crash may have left records numbered past
        // the state file's. The first lease starts past them. (A released tracker's writer leased its own.)
        // (A number past any real count, in a damaged log, is not taken: the state file would become unreadable.)
        let sequenceFloor = release == nil ? PersistentStateFile.floor(after: store.lastSequence()) : 0
        do throws(ConfigurationError) {
            uploader = try Self.makeUploader(configuration: configuration, store: store)
        } catch {
            if let release { Self.close(release, logger: configuration.diagnostics.logger) }
            throw error
        }
        let firstDay = days.range(of: state.firstDay) ?? days.range(of: days.name(of: now))!

        var preset = PresetProperties.read(
            appVersion: configuration.tracking.appVersion, deviceID: state.deviceID,
            timeZone: configuration.tracking.timeZone, now: now)
        if !configuration.tracking.devicePresets {
            for key in PresetProperties.deviceKeys { preset[key] = nil }
        }
        for (key, value) in configuration.tracking.presetOverrides { preset[key] = value }
        let context = PipelineContext(
            preset: preset, platform: PresetProperties.platform, appVersion: configuration.tracking.appVersion,
            firstDay: firstDay, enableSession: configuration.tracking.enableSession,
            sessionIdleMilliseconds: configuration.tracking.sessionIdleTimeout.milliseconds,
            sessionMaxMilliseconds: configuration.tracking.sessionMaxDuration.milliseconds,
            memoryLimit: max(configuration.storage.maxBufferedEvents, 4096),
            dropsOldestWhenFull: configuration.storage.whenBufferIsFull == .dropOldest)
        pipeline = EventPipeline(
            context: context, persisted: state, saveNeeded: !saved, store: store, stateFile: stateFile,
            generation: generation, unsaved: release?.unsaved ?? [], sequenceFloor: sequenceFloor, logger: logger, hook: configuration.tracking.beforeRecord, onRejection: configuration.tracking.onRejection,
            logEvents: configuration.diagnostics.logEvents,
            metrics: TrackerMetrics.make(dimensions: configuration.diagnostics.metricsDimensions),
            predecessor: release?.writerDone)
        var lifecycleOptions = LifecycleOptions(configuration: configuration)
        // A process's checkpoint and crash marker live in its own log, where its adopter finds them.
        if let log = (store as? EventLogStore)?.log, log.shared != nil, !log.isMemoryOnly { lifecycleOptions.logDirectory = log.directory }
        lifecycle = AutoTrackController(
            options: lifecycleOptions,
            now: { [clock] in
                LifecycleInstant(wall: clock.wallMilliseconds(), monotonic: Self.nanoseconds(clock.now()))
            })
        // An opt-out (or opt-in) in another process sharing the storage directory holds here from its next event on.
        // Observed before anything can read the shared state, so no change is missed.
        // Weakly: the pipeline outlives neither, and neither may keep the other alive after a release.
        pipeline.observeConsent({ [weak uploader, weak lifecycle] optedOut in
            uploader?.setConsent(granted: !optedOut)
            _ = lifecycle?.setQuiet(optedOut)
        }, afterErasure: { [weak uploader] in uploader?.trigger() })
        // An uploader learns of another process's opt-out before each batch, even when this one tracks nothing.
        uploader?.setConsentProbe { [weak pipeline] in pipeline?.uploadPermission ?? .waitForErasure }
        pipeline.start()
        lifecycle.connect(self, isFirstLaunch: consumeFirstLaunch())
        // Leftovers of earlier launches go now (with the consent as it is now: another process may have changed it).
        uploader?.setConsent(granted: !pipeline.identity.isOptedOut)
        uploader?.start()
    }

    /// Creates the storage directory `0700` (tightening an existing one, with a log line); on Apple
    /// platforms it is also protected (`completeUntilFirstUserAuthentication`) and excluded from backups.
    private static func prepareStorage(_ configuration: Configuration) throws(ConfigurationError) {
        do {
            try PrivateDirectory.prepare(configuration.storageDirectory, logger: configuration.diagnostics.logger)
        } catch {
            throw ConfigurationError(field: "storageDirectory", reason: "cannot be created: \(error.reason)")
        }
    }

    /// Where the durable event logs live: the `logs` folder of the storage directory (beside `state.json`), which
    /// holds one log directory per process that tracks into the storage directory.
    public static func logDirectory(in storageDirectory: URL) -> URL {
        storageDirectory.appendingPathComponent(StorageLayout.logsFolderName, isDirectory: true)
    }

    deinit {
        // Nothing can be tracked any more: the writer stores what was accepted, closes the log and so releases
        // the storage directory, on its own thread; nothing here waits for it (``shutdown(timeout:)`` is how a
        // program waits). A tracker made over the same directory meanwhile takes the open log over instead of
        // waiting. An open session is left to the checkpoint in its log: whoever adopts the log (or a tracker made
        // over the same directory in this process meanwhile, which takes the log over) recovers its `$AppEnd`.
        uploader?.beginStop()
        let (state, unsaved, writerDone) = pipeline.stop()
        if let store = pipeline.store as? EventLogStore {
            ReleasedTrackers.add(
                ReleasedTrackers.Release(
                    store: store, state: state, unsaved: unsaved, writerDone: writerDone, handover: pipeline.handover),
                for: configuration.storageDirectory)
        }
    }

    /// Closes a released tracker's store taken over by a tracker that then failed to start, once the released
    /// writer has ended, on a thread of its own (nobody waits for it).
    private static func close(_ release: ReleasedTrackers.Release, logger: Logger) {
        Thread.detachNewThread {
            ReleasedTrackers.waitForWriter(release.writerDone, logger: logger)
            release.store.close()
        }
    }

    // MARK: Events

    /// Records an event with the given properties. Returns false when the event was rejected (docs/events.md, "Validation"),
    /// or not recorded because the user opted out (``isOptedOut``) or the tracker was shut down.
    ///
    /// A rejected event is not recorded; the reason goes to the logger, to ``counters`` and to
    /// ``Configuration/Tracking/onRejection``.
    @discardableResult
    public func track(_ name: String, properties: Properties = [:]) -> Bool {
        let time = clock.wallMilliseconds()
        return submit(name: name, type: .track, method: .code, time: time, properties: properties, originalID: nil)
    }

    /// Records a typed event.
    @discardableResult
    public func track<E: TrackedEvent>(_ event: E) -> Bool {
        let time = clock.wallMilliseconds()
        return submit(name: E.eventName, type: .track, method: .code, time: time, properties: event.properties, originalID: nil)
    }

    /// Records an event for the user `distinctID`, not the tracker's own: what a server does for each request's
    /// user (docs/tracker-guide.md, "Server-side tracking").
    ///
    /// The event carries `distinctID` as its `distinct_id`, no login id, and the tracker's anonymous id (which,
    /// with the sequence number, names the event). The tracker's identity, session and lifecycle are untouched;
    /// its preset, super and dynamic super properties are merged as for ``track(_:properties:)``, and consent holds
    /// as for any event. Safe to call from many tasks at once, each with its own id.
    ///
    /// Returns false when the event is not recorded: `distinctID` is not a valid id (empty, only white space,
    /// over 255 UTF-8 bytes, or holding U+0000: rejected under ``ValidationRule/invalidIdentity``), the event
    /// was rejected as ``track(_:properties:)`` rejects one, the user opted out, or the tracker was shut down.
    @discardableResult
    public func track(_ name: String, distinctID: String, properties: Properties = [:]) -> Bool {
        let time = clock.wallMilliseconds()
        guard TrackerIdentity.isValidID(distinctID) else {
            return reject(EventRejection(event: name, key: "distinctID", rule: .invalidIdentity))
        }
        return submit(
            name: name, type: .track, method: .code, time: time, properties: properties, originalID: nil,
            callerID: distinctID)
    }

    /// Records a typed event for the user `distinctID` (see ``track(_:distinctID:properties:)``).
    @discardableResult
    public func track<E: TrackedEvent>(_ event: E, distinctID: String) -> Bool {
        track(E.eventName, distinctID: distinctID, properties: event.properties)
    }

    /// Links a user's anonymous id to their login id, for a server that knows both: records `$SignUp` with
    /// `distinct_id` and `login_id` = `loginID` and `original_id` = `anonymousID`, as ``login(_:)`` does for the
    /// tracker's own user, but leaves the tracker's identity alone. Unlike ``login(_:)`` it records the link
    /// every time it is called (a server keeps no memory of who is logged in).
    ///
    /// Returns false when either id is invalid (``ValidationRule/invalidIdentity``), the user opted out, or the
    /// tracker was shut down.
    @discardableResult
    public func trackSignUp(loginID: String, anonymousID: String) -> Bool {
        let time = clock.wallMilliseconds()
        guard TrackerIdentity.isValidID(loginID) else {
            return reject(EventRejection(event: "$SignUp", key: "loginID", rule: .invalidIdentity))
        }
        guard TrackerIdentity.isValidID(anonymousID) else {
            return reject(EventRejection(event: "$SignUp", key: "anonymousID", rule: .invalidIdentity))
        }
        return pipeline.enqueue(
            PendingEvent(
                name: "$SignUp", type: .trackSignup, method: .code, time: time, properties: [:], dynamicProperties: nil,
                hasDollarKey: false, originalID: anonymousID, callerID: loginID))
    }

    /// The entry point for auto-tracking: records `name` as an auto-track event at `time` (now when `nil`).
    /// Whether the event type is enabled is for the caller to decide (see ``trackAutomatic(_:at:)``).
    @discardableResult
    package func trackAutomatic(_ name: String, properties: Properties, at time: EpochMilliseconds? = nil) -> Bool {
        submit(
            name: name, type: .track, method: .autoTrack, time: time ?? clock.wallMilliseconds(),
            properties: properties, originalID: nil)
    }

    /// Records a preset auto-track event if its ``AutoTrackOptions`` member is enabled; returns whether it was recorded.
    @discardableResult
    package func trackAutomatic<E: AutoTrackedEvent>(_ event: E, at time: EpochMilliseconds? = nil) -> Bool {
        guard configuration.autoTrack.events.contains(E.option) else { return false }
        return trackAutomatic(E.eventName, properties: event.properties, at: time)
    }

    @inline(__always)
    private func submit(
        name: String, type: EventType, method: LibMethod, time: EpochMilliseconds, properties: Properties,
        originalID: String?, callerID: String? = nil
    ) -> Bool {
        if let error = PropertyValidator.check(eventName: name) { return reject(error) }
        var properties = properties
        let findings: PropertyValidator.Findings
        switch PropertyValidator.check(properties, event: name) {
        case .success(let found): findings = found
        case .failure(let error): return reject(error)
        }
        if findings.needsTruncation { PropertyValidator.truncateLongStrings(&properties) }
        let pending = PendingEvent(
            name: name, type: type, method: method, time: time, properties: properties, dynamicProperties: nil,
            hasDollarKey: findings.hasDollarKey, originalID: originalID, callerID: callerID)
        // The pipeline asks for the dynamic super properties only when a provider is set, and the provider runs
        // here, on the caller's thread, with no lock held.
        return pipeline.enqueue(pending) { provider, event in
            var values = provider()
            switch PropertyValidator.check(values, event: event.name) {
            case .success(let found):
                if found.needsTruncation { PropertyValidator.truncateLongStrings(&values) }
                event.hasDollarKey = event.hasDollarKey || found.hasDollarKey
                event.dynamicProperties = values
                return true
            case .failure(let error): return reject(error)
            }
        }
    }

    /// A profile operation for the tracker's user, or with `callerID` for that user (already validated).
    private func submitProfile(_ type: EventType, operation: String, properties: Properties, callerID: String? = nil) -> Bool {
        let time = clock.wallMilliseconds()
        switch PropertyValidator.check(properties, event: operation) {
        case .failure(let error): return reject(error)
        case .success(let findings):
            var properties = properties
            if findings.needsTruncation { PropertyValidator.truncateLongStrings(&properties) }
            return pipeline.enqueue(
                PendingEvent(name: "", type: type, method: .code, time: time, properties: properties,
                             dynamicProperties: nil, hasDollarKey: false, originalID: nil, callerID: callerID))
        }
    }

    /// Whether `distinctID` may name a profile operation's user; a rejection is counted and reported.
    private func checkProfileID(_ distinctID: String, operation: String) -> Bool {
        guard TrackerIdentity.isValidID(distinctID) else {
            return reject(EventRejection(event: operation, key: "distinctID", rule: .invalidIdentity))
        }
        return true
    }

    /// Checks a `profileIncrement`'s values: every one an integer or a double.
    private func checkIncrement(_ properties: Properties) -> Bool {
        for (key, value) in properties {
            switch value {
            case .int, .double: continue
            default: return reject(EventRejection(event: "profileIncrement", key: key, rule: .wrongValueType))
            }
        }
        return true
    }

    private func reject(_ error: EventRejection) -> Bool {
        rejections.withLock { $0[error.rule, default: 0] += 1 }
        pipeline.metrics?.rejected(error.rule)
        logger.warning(
            "spoor: event rejected",
            metadata: ["event": "\(error.event)", "key": "\(error.key ?? "")", "rule": "\(error.rule)"])
        configuration.tracking.onRejection?(error)
        return false
    }

    // MARK: Super properties

    /// Adds (or replaces) super properties: they are merged into every later event and survive restarts.
    /// Returns false, changing nothing, when any of them is invalid.
    @discardableResult
    public func registerSuperProperties(_ properties: Properties) -> Bool {
        var properties = properties
        switch PropertyValidator.check(properties, event: "registerSuperProperties") {
        case .failure(let error): return reject(error)
        case .success(let findings):
            if findings.needsTruncation { PropertyValidator.truncateLongStrings(&properties) }
        }
        pipeline.change(.register(properties))
        return true
    }

    /// Removes one super property.
    public func unregisterSuperProperty(_ key: String) {
        pipeline.change(.unregister(key))
    }

    /// Removes every super property.
    public func clearSuperProperties() {
        pipeline.change(.clearSuperProperties)
    }

    /// The current super properties.
    public var superProperties: Properties {
        pipeline.identity.superProperties
    }

    /// Sets (or, with `nil`, removes) a closure evaluated on every `track` call, whose properties are merged
    /// over the super properties and under the call site's. It runs on the calling thread, so keep it quick.
    public func registerDynamicSuperProperties(_ provider: (@Sendable () -> Properties)?) {
        pipeline.setDynamicSuperProperties(provider)
    }

    // MARK: Identity

    /// The id analyses count by: the login id when logged in, else the anonymous id.
    public var distinctID: String { pipeline.identity.distinctID }
    /// The install's anonymous id.
    public var anonymousID: String { pipeline.identity.anonymousID }
    /// The login id, when a user is logged in.
    public var loginID: String? { pipeline.identity.loginID }

    /// Replaces the anonymous id (for example with the app's own device id). Returns false when it is invalid.
    @discardableResult
    public func identify(_ anonymousID: String) -> Bool {
        guard TrackerIdentity.isValidID(anonymousID) else {
            return reject(EventRejection(event: "identify", rule: .invalidIdentity))
        }
        pipeline.change(.identify(anonymousID))
        return true
    }

    /// Makes a new random anonymous id.
    public func resetAnonymousID() {
        let id = UUID().uuidString
        pipeline.change(.identify(id))
    }

    /// Logs a user in: later events carry `loginID` as `distinct_id`, and `$SignUp` is recorded (with
    /// `original_id` = the anonymous id) unless the same id is already logged in.
    @discardableResult
    public func login(_ loginID: String) -> Bool {
        guard TrackerIdentity.isValidID(loginID) else {
            return reject(EventRejection(event: "login", rule: .invalidIdentity))
        }
        // The identity change and the `$SignUp` enter the pipeline in one step, so no event slips between.
        // Opted out: the login is remembered, but no `$SignUp` is recorded.
        let signedUp = pipeline.login(loginID, at: clock.wallMilliseconds())
        // An upload after `login`, so the new identity's first events go out promptly.
        if signedUp { requestFlush() }
        return true
    }

    /// Logs the user out: later events carry the anonymous id as `distinct_id`.
    public func logout() {
        pipeline.change(.logout)
    }

    // MARK: Profiles

    /// Sets profile properties of the current user.
    @discardableResult
    public func profileSet(_ properties: Properties) -> Bool {
        submitProfile(.profileSet, operation: "profileSet", properties: properties)
    }

    /// Sets profile properties that are not set yet.
    @discardableResult
    public func profileSetOnce(_ properties: Properties) -> Bool {
        submitProfile(.profileSetOnce, operation: "profileSetOnce", properties: properties)
    }

    /// Adds to numeric profile properties. Every value must be an integer or a double.
    @discardableResult
    public func profileIncrement(_ properties: Properties) -> Bool {
        guard checkIncrement(properties) else { return false }
        return submitProfile(.profileIncrement, operation: "profileIncrement", properties: properties)
    }

    /// Appends strings to list profile properties.
    @discardableResult
    public func profileAppend(_ properties: [String: [String]]) -> Bool {
        submitProfile(.profileAppend, operation: "profileAppend", properties: properties.mapValues { .list($0) })
    }

    /// Removes profile properties.
    @discardableResult
    public func profileUnset(_ keys: [String]) -> Bool {
        var properties = Properties(minimumCapacity: keys.count)
        for key in keys { properties[key] = .bool(true) }
        return submitProfile(.profileUnset, operation: "profileUnset", properties: properties)
    }

    /// Deletes the current user's whole profile.
    @discardableResult
    public func profileDelete() -> Bool {
        submitProfile(.profileDelete, operation: "profileDelete", properties: [:])
    }

    // MARK: Profiles of a given user

    // The same operations for the user `distinctID`, not the tracker's own (a server's request's user): the record
    // carries `distinctID` as its `distinct_id`; the tracker's identity is untouched. An invalid id is rejected
    // under `invalidIdentity`, as for `track(_:distinctID:properties:)`.

    /// Sets profile properties of the user `distinctID`.
    @discardableResult
    public func profileSet(_ properties: Properties, distinctID: String) -> Bool {
        guard checkProfileID(distinctID, operation: "profileSet") else { return false }
        return submitProfile(.profileSet, operation: "profileSet", properties: properties, callerID: distinctID)
    }

    /// Sets profile properties of the user `distinctID` that are not set yet.
    @discardableResult
    public func profileSetOnce(_ properties: Properties, distinctID: String) -> Bool {
        guard checkProfileID(distinctID, operation: "profileSetOnce") else { return false }
        return submitProfile(.profileSetOnce, operation: "profileSetOnce", properties: properties, callerID: distinctID)
    }

    /// Adds to numeric profile properties of the user `distinctID`. Every value must be an integer or a double.
    @discardableResult
    public func profileIncrement(_ properties: Properties, distinctID: String) -> Bool {
        guard checkProfileID(distinctID, operation: "profileIncrement"), checkIncrement(properties) else { return false }
        return submitProfile(.profileIncrement, operation: "profileIncrement", properties: properties, callerID: distinctID)
    }

    /// Appends strings to list profile properties of the user `distinctID`.
    @discardableResult
    public func profileAppend(_ properties: [String: [String]], distinctID: String) -> Bool {
        guard checkProfileID(distinctID, operation: "profileAppend") else { return false }
        return submitProfile(
            .profileAppend, operation: "profileAppend", properties: properties.mapValues { .list($0) }, callerID: distinctID)
    }

    /// Removes profile properties of the user `distinctID`.
    @discardableResult
    public func profileUnset(_ keys: [String], distinctID: String) -> Bool {
        guard checkProfileID(distinctID, operation: "profileUnset") else { return false }
        var properties = Properties(minimumCapacity: keys.count)
        for key in keys { properties[key] = .bool(true) }
        return submitProfile(.profileUnset, operation: "profileUnset", properties: properties, callerID: distinctID)
    }

    /// Deletes the whole profile of the user `distinctID`.
    @discardableResult
    public func profileDelete(distinctID: String) -> Bool {
        guard checkProfileID(distinctID, operation: "profileDelete") else { return false }
        return submitProfile(.profileDelete, operation: "profileDelete", properties: [:], callerID: distinctID)
    }

    /// The clock's monotonic reading in nanoseconds, the unit of timers and the lifecycle.
    package func monotonicNanoseconds() -> UInt64 { Self.nanoseconds(clock.now()) }

    /// `duration` in whole nanoseconds, zero when negative.
    static func nanoseconds(_ duration: Duration) -> UInt64 { UInt64(max(0, duration.nanoseconds)) }

    // MARK: Timers

    /// Starts a timer for the event `name`; ``timerEnd(_:properties:)`` records it with `event_duration`.
    public func timerStart(_ name: String) -> TimerID {
        let now = monotonicNanoseconds()
        return timers.withLock { $0.start(name, at: now) }
    }

    /// Pauses a timer. Returns false when there is no such timer.
    @discardableResult
    public func timerPause(_ id: TimerID) -> Bool {
        let now = monotonicNanoseconds()
        return timers.withLock { $0.pause(id, at: now) }
    }

    /// Resumes a paused timer. Returns false when there is no such timer.
    @discardableResult
    public func timerResume(_ id: TimerID) -> Bool {
        let now = monotonicNanoseconds()
        return timers.withLock { $0.resume(id, at: now) }
    }

    /// Ends a timer and records its event with `event_duration` in seconds (3 decimals; 0 when ≥ 24 h).
    /// Returns false when there is no such timer or the event was rejected.
    @discardableResult
    public func timerEnd(_ id: TimerID, properties: Properties = [:]) -> Bool {
        let now = monotonicNanoseconds()
        guard let elapsed = timers.withLock({ $0.end(id, at: now) }) else {
            logger.warning("spoor: timerEnd for an unknown timer", metadata: ["timer": "\(id)"])
            return false
        }
        var properties = properties
        properties["event_duration"] = .double(EventDuration.seconds(fromNanoseconds: elapsed))
        return track(id.eventName, properties: properties)
    }

    /// Removes a timer without recording anything. Returns false when there is no such timer.
    @discardableResult
    public func timerRemove(_ id: TimerID) -> Bool {
        timers.withLock { $0.remove(id) }
    }

    /// Removes every timer.
    public func timersClear() {
        timers.withLock { $0.clear() }
    }

    /// The app ended (went to the background): running timers stop counting.
    package func pauseAllTimers(at now: UInt64? = nil) {
        let now = now ?? monotonicNanoseconds()
        timers.withLock { $0.pauseAll(at: now) }
    }

    /// The app started again: timers paused by ``pauseAllTimers(at:)`` (and not by the user) run again.
    package func resumeAllTimers(at now: UInt64? = nil) {
        let now = now ?? monotonicNanoseconds()
        timers.withLock { $0.resumeAll(at: now) }
    }

    /// The app started or ended: the uploader's flush interval runs only while started (a suspended app must not
    /// be woken for it).
    package func appStartedChanged(_ started: Bool) {
        uploader?.setIntervalActive(started)
    }

    // MARK: Sessions and first launch

    /// Ends the current session: the next event starts a new one (a cold start does this on its own).
    package func startNewSession() {
        pipeline.endSession()
    }

    /// Whether this is the first launch ever on this install, clearing the flag (persisted) so it is true once.
    package func consumeFirstLaunch() -> Bool {
        pipeline.change(.consumeFirstLaunch).changed
    }

    // MARK: Counters, flush, shutdown

    /// What happened to the events so far.
    public var counters: TrackerCounters {
        let (accepted, afterShutdown, atBound) = pipeline.counts
        var rejected = rejections.withLock { $0 }
        for (rule, count) in pipeline.hookRejections.withLock({ $0 }) { rejected[rule, default: 0] += count }
        return TrackerCounters(
            accepted: accepted, rejected: rejected, droppedByLog: pipeline.store.droppedCount,
            droppedByHook: pipeline.hookDropped.withLock { $0 },
            droppedAfterShutdown: afterShutdown, droppedWhenBufferFull: atBound, corrupt: pipeline.store.corruptCount,
            corruptStateFiles: corruptStateFiles, upload: uploader?.counters)
    }

    /// Asks the writer to store and sync everything accepted so far, then the uploader to send it, without
    /// waiting (lifecycle starts and ends, and `login`, use this).
    package func requestFlush() {
        let stored = pipeline.requestFlush()
        guard let uploader else { return }
        Task {
            _ = await stored.value
            uploader.trigger()
        }
    }

    /// Stores and syncs everything accepted so far, waiting at most `timeout`; returns whether it finished
    /// in time. For `willTerminate`, where waiting must be short and bounded.
    package func flushAndWait(timeout: Duration) -> Bool {
        pipeline.requestFlush().wait(timeout: timeout) == true
    }

    /// Stores and syncs every event accepted before the call, then (with a ``Configuration/Upload/serverURL``) uploads
    /// everything waiting, and returns what happened: the batches and events delivered, or what is still
    /// pending and why (`PendingReason`).
    ///
    /// A flush cuts a retry backoff short (one attempt) and ends a pause after a 401 or 403; it waits out a
    /// collector's `Retry-After` and respects the upload policy. It waits at most `timeout` for the upload
    /// (each request also has ``Configuration/Upload/requestTimeout``); the upload goes on in the background after that.
    @discardableResult
    public func flush(timeout: Duration = .seconds(60)) async -> FlushResult {
        // Another process sharing the storage directory may have opted out or in since this one's last call: the
        // uploader is told (by the consent observer, on this thread) before this flush asks it for anything.
        pipeline.refreshIfStale()
        _ = await pipeline.requestFlush().value
        guard let uploader else {
            let reason: PendingReason = configuration.upload.serverURL == nil ? .noServer : .stopped
            return FlushResult(pendingEvents: pendingEventCount, pendingReason: reason)
        }
        return await uploader.flush(timeout: timeout)
    }

    /// Ends the open session, makes everything accepted durable, saves the state and closes the log,
    /// waiting at most `timeout`. Returns whether it finished in time.
    ///
    /// While the app is started, the session ends first as at an end (`$AppPageLeave` for every visible
    /// page, then `$AppEnd`), whichever lifecycle source drives the tracker, so every recorded `$AppStart`
    /// has its `$AppEnd`. Events tracked and lifecycle signals received afterwards are not recorded.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(5)) async -> Bool {
        // The session's end is tracked before the pipeline stops (another caller may be delivering it).
        _ = await lifecycle.shutdown().value(orAfter: timeout, ())
        // An upload in flight is abandoned at once (its batch goes again at the next launch, same id).
        let uploadStopped = uploader?.beginStop()
        let finished = await pipeline.requestFlush(stop: true).value(orAfter: timeout, false)
        await uploadStopped?.value
        return finished
    }
}
