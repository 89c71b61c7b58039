public import Foundation
public import SpoorModel
public import SpoorLog
public import SpoorWire
public import Logging
public import SpoorUpload
package import SpoorSystem

/// What `SpoorAutoCapture` hooks into the UI framework to capture (see ``Configuration/AutoTrack/capture``).
public struct AutoCaptureOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Page views: view controllers appearing and disappearing.
    public static let pages = AutoCaptureOptions(rawValue: 1 << 0)
    /// Clicks: control actions, cell selection, gesture targets, alert actions.
    public static let clicks = AutoCaptureOptions(rawValue: 1 << 1)
    /// Child pages: a view controller whose parent is not a navigation, tab, page or split controller is
    /// a page of its own too (by default only the top-level controller is, as in the Sensors SDK).
    public static let childPages = AutoCaptureOptions(rawValue: 1 << 2)
}

/// The auto-track events a tracker emits (docs/lifecycle.md, "Which events are emitted").
///
/// An event left out is not emitted, but the bookkeeping behind it keeps running,
/// so turning it on later gives correct values.
public struct AutoTrackOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `$AppStart`.
    public static let appStart = AutoTrackOptions(rawValue: 1 << 0)
    /// `$AppStartPassively`.
    public static let appStartPassively = AutoTrackOptions(rawValue: 1 << 1)
    /// `$AppEnd`.
    public static let appEnd = AutoTrackOptions(rawValue: 1 << 2)
    /// `$AppViewScreen`.
    public static let appViewScreen = AutoTrackOptions(rawValue: 1 << 3)
    /// `$AppClick`.
    public static let appClick = AutoTrackOptions(rawValue: 1 << 4)
    /// `$AppPageLeave`.
    public static let appPageLeave = AutoTrackOptions(rawValue: 1 << 5)
    /// `AppCrashed`.
    public static let appCrashed = AutoTrackOptions(rawValue: 1 << 6)

    /// Every auto-track event.
    public static let all: AutoTrackOptions = [
        .appStart, .appStartPassively, .appEnd, .appViewScreen, .appClick, .appPageLeave, .appCrashed,
    ]
}

/// A configuration field that is out of range, reported when a ``Tracker`` is created.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field at fault, by its path in ``Configuration``, such as `upload.flushBulkSize`.
    public var field: String
    /// Why it is invalid.
    public var reason: String

    /// Creates an error for `field`.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "invalid configuration: \(field): \(reason)" }
}

/// Everything a ``Tracker`` needs to know when it is created, in sections by what they govern.
///
/// Only ``storageDirectory`` is required; every section has defaults that suit an app:
///
/// | section | what it decides |
/// | --- | --- |
/// | ``tracking`` | what events carry and who sees them first: app version, time zone, preset overrides, sessions, consent at install, the `beforeRecord` hook, rejections |
/// | ``autoTrack`` | the events the tracker emits on its own: which ones, pages and clicks left out, capture without code, the lifecycle heartbeat |
/// | ``storage`` | the durable log on disk and the memory in front of it: caps, durability |
/// | ``upload`` | shipping to the collector: server URL, token, when to upload, timeouts, requests in flight, backoff, compression, the HTTP client |
/// | ``diagnostics`` | seeing what happens: the logger, debug logging of events, metrics dimensions |
///
/// ```swift
/// var configuration = Configuration(storageDirectory: URL(fileURLWithPath: "/var/lib/myapp/spoor"))
/// configuration.upload.serverURL = URL(string: "https://collector.example")   // its /v1/batch
/// configuration.autoTrack.events = [.appStart, .appEnd]
/// let tracker = try Tracker(configuration: configuration)
/// ```
///
/// A validation error names the field by its path, such as `upload.maxBatchesInFlight`. Tests set the clock and
/// the upload jitter through the `SpoorTesting` product (`configuration.clock = ManualClock()`); an app has no
/// such settings to get wrong.
public struct Configuration: Sendable {
    /// Where the tracker keeps its state file (`state.json`) and its durable event log (a log of this process's
    /// own in the `logs` folder, see ``Tracker/logDirectory(in:)``; several processes may share the directory).
    /// Created when missing. The one value without a default.
    public var storageDirectory: URL
    /// What events carry and who sees them first.
    public var tracking = Tracking()
    /// The events the tracker emits on its own, and the lifecycle bookkeeping behind them.
    public var autoTrack = AutoTrack()
    /// The durable log and the memory in front of it.
    public var storage = Storage()
    /// Shipping events to the collector.
    public var upload = Upload()
    /// Logging and metrics.
    public var diagnostics = Diagnostics()
    /// What tests inject; set through the `SpoorTesting` product.
    package var testSeams = TestSeams()

    /// Creates a configuration with default values for everything but the storage directory.
    public init(storageDirectory: URL) {
        self.storageDirectory = storageDirectory
    }

    /// What events carry and who sees them first (``Configuration/tracking``).
    public struct Tracking: Sendable {
        /// The host application's version (`$app_version`); empty when unknown.
        public var appVersion: String = ""
        /// The time zone that decides calendar days (`$is_first_day`) and `$timezone_offset`.
        public var timeZone: TimeZone = .current
        /// Preset properties to use instead of reading them from the system, mainly for tests and
        /// platforms where the host knows better (screen size). Merged over what was read.
        public var presetOverrides: [String: PropertyValue] = [:]
        /// Whether events carry the presets that describe the device: `$os`, `$os_version`, `$model`,
        /// `$manufacturer`, `$timezone_offset` (and `$screen_width`, `$screen_height`). Default true; a server's
        /// events are about its users, not its host, so ``Configuration/server(storageDirectory:serverURL:)`` turns
        /// them off. `$device_id`, `$lib`, `$lib_version` and `$app_version` are always there; a key set in
        /// ``presetOverrides`` is carried either way.
        public var devicePresets: Bool = true
        /// Whether events carry `$event_session_id`. Default off.
        public var enableSession: Bool = false
        /// A session ends after this long without events. Default 30 minutes.
        public var sessionIdleTimeout: Duration = .seconds(30 * 60)
        /// A session ends after this long whatever happens. Default 12 hours.
        public var sessionMaxDuration: Duration = .seconds(12 * 3600)
        /// Whether a fresh install starts opted out, for apps that ask the user first: nothing is recorded
        /// until ``Tracker/optIn()``. Once the user decided, the decision persists and this is not read again.
        /// Default false.
        public var startsOptedOut: Bool = false
        /// Sees every `track` event (auto-tracked and `$SignUp` included, profile records not) after its
        /// properties are merged, and may change its properties (``HookEvent/properties``) or drop it
        /// (``HookDecision/drop``). The result is validated afterwards: a hook that throws, or leaves an invalid
        /// property, gets the event rejected under ``ValidationRule/hookThrew`` or ``ValidationRule/hookInvalid``.
        ///
        /// It runs on the tracker's writer thread (`spoor.writer`), one event at a time in record order, never
        /// on the thread that called `track`: merging happens there, and the caller's `track` stays as cheap
        /// with a hook as without. Keep it quick (a slow hook holds up storing), and do not call the tracker
        /// from it. Default `nil`: no hook, and no cost.
        public var beforeRecord: (@Sendable (inout HookEvent) throws -> HookDecision)?
        /// Called with every rejected event's reason (besides the log and the counters): on the calling thread,
        /// or on the writer thread for ``beforeRecord``'s rejections.
        public var onRejection: (@Sendable (EventRejection) -> Void)?

        /// The defaults.
        public init() {}
    }

    /// The events the tracker emits on its own (``Configuration/autoTrack``), and the lifecycle bookkeeping behind
    /// them (docs/lifecycle.md).
    public struct AutoTrack: Sendable {
        /// Which auto-track events are emitted. Default: none.
        public var events: AutoTrackOptions = []
        /// Pages and clicks auto-tracking leaves out. Default: nothing.
        public var ignore = AutoTrackIgnoreList()
        /// What the `SpoorAutoCapture` module captures without code on Apple platforms: page views from view
        /// controllers, clicks from controls, cells, gestures and alert actions. Default: nothing. The events
        /// themselves still need ``events`` (`.appViewScreen`, `.appPageLeave`, `.appClick`).
        public var capture: AutoCaptureOptions = []
        /// How often, while the app is started, the lifecycle checkpoint records that the process is alive, so
        /// that a process killed without warning gets an `$AppEnd` timed close to its death at the next launch.
        /// Default 5 s. `nil` turns the timer off: a host that drives time itself (a manual clock in tests or
        /// simulations) calls ``Tracker/noteAlive()`` instead.
        public var heartbeatInterval: Duration? = .seconds(5)

        /// The defaults.
        public init() {}
    }

    /// The durable log on disk and the memory in front of it (``Configuration/storage``).
    public struct Storage: Sendable {
        /// The most events the durable log keeps; beyond it the oldest are dropped and counted. Default 10,000.
        ///
        /// Raise it to keep more events through a long time offline; it costs disk, not memory
        /// (``maxBufferedEvents`` bounds memory).
        public var maxEvents: Int = 10_000
        /// The most bytes the durable log may hold. Default 32 MiB.
        public var maxBytes: Int = 32 << 20
        /// When appended events are forced to disk. Default: at most once a second.
        public var durability: Durability = .batched(interval: .seconds(1))
        /// The most accepted events waiting in memory for the writer (at least 4,096). When the writer falls this
        /// far behind, `track` waits for it rather than lose events or grow without bound; only a burst far above
        /// what the disk can take gets there. Default 10,000 (about 10 MiB of realistic events).
        public var maxBufferedEvents: Int = 10_000
        /// What `track` does when ``maxBufferedEvents`` events wait: ``BufferPolicy/block`` (the default: wait for
        /// the writer, losing nothing) or ``BufferPolicy/dropOldest`` (never wait: drop the oldest waiting event,
        /// counted in ``TrackerCounters/droppedWhenBufferFull``), which a server wants.
        public var whenBufferIsFull: BufferPolicy = .block

        /// The defaults.
        public init() {}
    }

    /// Shipping events to the collector (``Configuration/upload``; docs/upload.md has the rules).
    public struct Upload: Sendable {
        /// The collector: its batch endpoint (`https://collector.example/v1/batch`), or just its origin
        /// (`https://collector.example`), to which `/v1/batch` is added. `nil` keeps events local: nothing is
        /// uploaded.
        public var serverURL: URL?
        /// Sent as `Authorization: Bearer <token>` with every upload when set. Change it at run time with
        /// ``Tracker/setToken(_:)`` (which also ends a pause after a 401 or 403).
        public var token: String?
        /// When uploads may run: `UploadPolicy.always` (the default), `UploadPolicy.unmeteredOnly` (on Apple
        /// platforms, no cellular or Low Data Mode), or `UploadPolicy.custom(_:)`.
        public var policy: UploadPolicy = .always
        /// Upload when this many events are waiting; also the most events in one batch. Default 100.
        public var flushBulkSize: Int = 100
        /// Upload at least this often while events are waiting and the app is started (always, without a
        /// lifecycle source). Default 15 s.
        public var flushInterval: Duration = .seconds(15)
        /// The longest one upload request may take before it counts as failed and is retried. Default 30 s.
        public var requestTimeout: Duration = .seconds(30)
        /// The most upload requests on the wire at once, 1 to 16 (the outbox holds at most 16 batches). Default
        /// 4. Batches still leave the outbox in order, and after a failure uploads go one batch at a time until
        /// one succeeds (docs/upload.md).
        public var maxBatchesInFlight: Int = 4
        /// The delays between failed upload attempts: exponential with full jitter, 1 s base and 5 min cap by
        /// default.
        public var backoff = Backoff()
        /// Compression for uploads. Default ``Codec/preferred``: zstd where this build has it (the
        /// `SystemLibraries` trait, on by default on Linux), gzip elsewhere (every Apple platform). Validation
        /// refuses a codec the build cannot write.
        public var codec: Codec = .preferred
        /// How many batches the `rejected` area keeps, and how many bytes. Default 64 batches, 8 MiB.
        public var rejectedLimits = RejectedAreaLimits()
        /// What upload requests go through; `nil` uses Foundation's `URLSession` (`URLSessionHTTPClient`). A
        /// server host can bring its own client; tests script answers.
        public var httpClient: (any HTTPTransportClient)?
        /// Watches the network for the upload policy and a prompt retry when it returns; `nil` uses
        /// `NWPathMonitor` on Apple platforms and nothing elsewhere. A host with its own view of the network
        /// brings its own.
        public var networkMonitor: (any NetworkMonitor)?
        /// Called after every upload request with what came of it (the batch, its events, the status, what was
        /// done with it): for an app's own upload log or metrics. It runs on the uploader's task, so keep it
        /// quick. Default nil.
        public var onAttempt: (@Sendable (UploadAttempt) -> Void)?

        /// The defaults: nothing is uploaded until ``serverURL`` is set.
        public init() {}
    }

    /// Seeing what the tracker does (``Configuration/diagnostics``).
    public struct Diagnostics: Sendable {
        /// Where warnings (rejected events, storage trouble) are logged.
        public var logger: Logger = Logger(label: "spoor.tracker")
        /// Debug mode (the Sensors SDK's debug mode, without the server side): every stored event is logged as
        /// one JSON line (the `spoor decode` form) through ``logger`` at `debug` level, from the writer thread,
        /// never the caller's. The logger's level must let `debug` through. Default off.
        public var logEvents: Bool = false
        /// Dimensions added to every swift-metrics counter the tracker exports (to tell trackers apart), such as
        /// `[("tracker", "main")]`. The counters are exported only when the host called
        /// `MetricsSystem.bootstrap` before creating the tracker: `spoor_events_accepted_total`,
        /// `spoor_events_rejected_total` (dimension `rule`) and `spoor_events_dropped_total` (dimension
        /// `reason`: `log`, `hook`, `shutdown`).
        public var metricsDimensions: [(String, String)] = []

        /// The defaults.
        public init() {}
    }

    /// What `track` does when ``Storage/maxBufferedEvents`` events are waiting in memory for the writer
    /// (``Storage/whenBufferIsFull``).
    public enum BufferPolicy: Sendable, Hashable {
        /// The caller waits until the writer has taken the waiting events: nothing is lost, and memory stays
        /// bounded. What an app wants (only a burst far beyond what its disk can take gets there).
        case block
        /// The caller never waits: the oldest waiting event is dropped, whole and before any of it is written, and
        /// counted (``TrackerCounters/droppedWhenBufferFull``, and the `spoor_events_dropped_total` metric with
        /// `reason` `buffer`). Its sequence number is left as a gap. What a server wants: a request must never
        /// wait for its analytics.
        case dropOldest
    }

    /// What tests inject instead of the system's time and randomness. Out of an app's sight: the `SpoorTesting`
    /// product sets them (its `Configuration.clock` and `Configuration.uploadRandom`).
    package struct TestSeams: Sendable {
        /// The one clock of the tracker, its log and its uploader: event `time`, durations, syncs, backoff,
        /// `Retry-After`, request timeouts.
        package var clock: any SpoorClock = SystemClock()
        /// The uploader's jitter; `nil` uses the system generator.
        package var uploadRandom: (any RandomNumberGenerator & Sendable)?

        package init() {}
    }

    /// A configuration for a server that tracks events for many users (docs/tracker-guide.md, "Server-side
    /// tracking"): each call names its user (``Tracker/track(_:distinctID:properties:)``), so the tracker keeps no
    /// user of its own worth describing.
    ///
    /// From the app defaults it differs in:
    /// - ``Tracking/devicePresets`` off: no `$os`, `$model`… describing the host;
    /// - no auto-tracking, no capture and no lifecycle heartbeat (``AutoTrack/heartbeatInterval`` nil); a server
    ///   attaches no lifecycle source, so no `$AppStart` or `$AppEnd` either; sessions stay off;
    /// - ``Storage/whenBufferIsFull`` = ``BufferPolicy/dropOldest``: a request never waits for the writer; at
    ///   ``Storage/maxBufferedEvents`` (10,000 by default) waiting events the oldest is dropped and counted.
    ///
    /// Everything else (the log's caps, upload timing, the logger) is the app default and can be changed after.
    ///
    /// - Parameters:
    ///   - storageDirectory: where the state file and the durable log live.
    ///   - serverURL: the collector (see ``Upload/serverURL``); `nil` keeps events local.
    public static func server(storageDirectory: URL, serverURL: URL?) -> Configuration {
        var configuration = Configuration(storageDirectory: storageDirectory)
        configuration.upload.serverURL = serverURL
        configuration.tracking.devicePresets = false
        configuration.tracking.enableSession = false
        configuration.autoTrack.events = []
        configuration.autoTrack.capture = []
        configuration.autoTrack.heartbeatInterval = nil
        configuration.storage.whenBufferIsFull = .dropOldest
        return configuration
    }

    /// Throws the first field that is out of range, named by its path (`upload.requestTimeout`).
    public func validate() throws(ConfigurationError) {
        guard storageDirectory.isFileURL, !storageDirectory.path.isEmpty else {
            throw ConfigurationError(field: "storageDirectory", reason: "must be a file URL")
        }
        try tracking.validate()
        try storage.validate()
        try upload.validate()
        guard storage.maxEvents >= upload.flushBulkSize else {
            throw ConfigurationError(
                field: "storage.maxEvents",
                reason: "must be at least upload.flushBulkSize (\(upload.flushBulkSize)), got \(storage.maxEvents)")
        }
        if let heartbeatInterval = autoTrack.heartbeatInterval, heartbeatInterval < .milliseconds(100) {
            throw ConfigurationError(
                field: "autoTrack.heartbeatInterval", reason: "must be at least 100 ms, or nil, got \(heartbeatInterval)")
        }
    }
}

extension Configuration.Tracking {
    fileprivate func validate() throws(ConfigurationError) {
        guard sessionIdleTimeout > .zero else {
            throw ConfigurationError(field: "tracking.sessionIdleTimeout", reason: "must be positive")
        }
        guard sessionMaxDuration >= sessionIdleTimeout else {
            throw ConfigurationError(field: "tracking.sessionMaxDuration", reason: "must be at least tracking.sessionIdleTimeout")
        }
        for (key, value) in presetOverrides {
            if let error = PropertyValidator.check(key: key, value: value, event: "presetOverrides") {
                throw ConfigurationError(field: "tracking.presetOverrides", reason: error.description)
            }
        }
    }
}

extension Configuration.Storage {
    fileprivate func validate() throws(ConfigurationError) {
        guard maxEvents >= 1, maxEvents <= 100_000_000 else {
            throw ConfigurationError(field: "storage.maxEvents", reason: "must be between 1 and 100,000,000, got \(maxEvents)")
        }
        guard maxBytes >= 64 << 10 else {
            throw ConfigurationError(field: "storage.maxBytes", reason: "must be at least 64 KiB, got \(maxBytes)")
        }
        if case .batched(let interval) = durability, interval <= .zero {
            throw ConfigurationError(field: "storage.durability", reason: "batched interval must be positive")
        }
        guard maxBufferedEvents >= 1, maxBufferedEvents <= 10_000_000 else {
            throw ConfigurationError(
                field: "storage.maxBufferedEvents", reason: "must be between 1 and 10,000,000, got \(maxBufferedEvents)")
        }
    }
}

extension Configuration.Upload {
    fileprivate func validate() throws(ConfigurationError) {
        if let serverURL {
            let scheme = serverURL.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", serverURL.host != nil else {
                throw ConfigurationError(field: "upload.serverURL", reason: "must be an http or https URL with a host")
            }
        }
        if let token, token.isEmpty || token.contains(where: { $0.isNewline || $0 == "\0" }) {
            throw ConfigurationError(field: "upload.token", reason: "must be non-empty, on one line")
        }
        guard (1...10_000).contains(flushBulkSize) else {
            throw ConfigurationError(field: "upload.flushBulkSize", reason: "must be between 1 and 10000, got \(flushBulkSize)")
        }
        guard flushInterval >= .milliseconds(100), flushInterval <= .seconds(24 * 3600) else {
            throw ConfigurationError(field: "upload.flushInterval", reason: "must be between 100 ms and 24 h, got \(flushInterval)")
        }
        guard requestTimeout >= .milliseconds(100), requestTimeout <= .seconds(600) else {
            throw ConfigurationError(
                field: "upload.requestTimeout", reason: "must be between 100 ms and 10 minutes, got \(requestTimeout)")
        }
        guard (1...16).contains(maxBatchesInFlight) else {
            throw ConfigurationError(
                field: "upload.maxBatchesInFlight", reason: "must be between 1 and 16, got \(maxBatchesInFlight)")
        }
        guard backoff.base >= .milliseconds(1), backoff.cap >= backoff.base, backoff.cap <= .seconds(86_400) else {
            throw ConfigurationError(
                field: "upload.backoff",
                reason: "needs a base of at least 1 ms and a cap between the base and one day, got \(backoff.base) and \(backoff.cap)")
        }
        guard codec.isAvailable else {
            throw ConfigurationError(field: "upload.codec", reason: "\(codec) is not in this build (it needs the SystemLibraries trait); use gzip")
        }
        guard rejectedLimits.maxBatches >= 1, rejectedLimits.maxBytes >= 1024 else {
            throw ConfigurationError(field: "upload.rejectedLimits", reason: "must keep at least 1 batch and 1 KiB")
        }
    }
}

// The one place each of the tracker's sections becomes the log's and the uploader's own configuration.
extension Configuration {
    /// The durable log's configuration: the storage caps and durability, on the tracker's clock.
    var logConfiguration: EventLog.Configuration {
        EventLog.Configuration(
            maxBytes: storage.maxBytes, maxRecords: storage.maxEvents, durability: storage.durability,
            clock: testSeams.clock)
    }

    /// The uploader's configuration for `endpoint`: the upload section, on the tracker's clock and jitter.
    func uploadConfiguration(endpoint: URL) -> UploadConfiguration {
        var configuration = UploadConfiguration(url: endpoint, token: upload.token)
        if let client = upload.httpClient { configuration.client = client }
        if let monitor = upload.networkMonitor { configuration.networkMonitor = monitor }
        configuration.policy = upload.policy
        configuration.requestTimeout = upload.requestTimeout
        configuration.maxBatchesInFlight = upload.maxBatchesInFlight
        configuration.backoff = upload.backoff
        configuration.batchSize = upload.flushBulkSize
        configuration.codec = upload.codec
        configuration.flushInterval = upload.flushInterval
        configuration.rejectedLimits = upload.rejectedLimits
        configuration.onAttempt = upload.onAttempt
        configuration.clock = testSeams.clock
        if let random = testSeams.uploadRandom { configuration.random = random }
        configuration.userAgent = UploadConfiguration.userAgent(version: SpoorVersion.current)
        return configuration
    }
}
