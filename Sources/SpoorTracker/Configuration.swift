public import Foundation
public import SpoorModel
public import SpoorLog
public import SpoorWire
public import Logging
public import SpoorUpload

/// What `SpoorAutoCapture` hooks into the UI framework to capture (see ``Configuration/autoCapture``).
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
    /// The field at fault, such as `flushBulkSize`.
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

/// Everything a ``Tracker`` needs to know when it is created.
///
/// ```swift
/// var configuration = Configuration(storageDirectory: URL(fileURLWithPath: "/var/lib/myapp/spoor"))
/// configuration.serverURL = URL(string: "https://collector.example")   // its /v1/batch
/// configuration.autoTrack = [.appStart, .appEnd]
/// let tracker = try Tracker(configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// When the durable log forces appended events to disk (`Durability` in SpoorLog).
    public typealias Durability = SpoorLog.Durability

    /// How upload batches are compressed (`Codec` in SpoorWire).
    public typealias Codec = SpoorWire.Codec

    /// Where the tracker keeps its state file (`state.json`) and its durable event log (the `log` folder,
    /// see ``Tracker/logDirectory(in:)``). Created when missing.
    public var storageDirectory: URL
    /// The collector: its batch endpoint (`https://collector.example/v1/batch`), or just its origin
    /// (`https://collector.example`), to which `/v1/batch` is added. `nil` keeps events local: nothing is uploaded.
    public var serverURL: URL?
    /// Sent as `Authorization: Bearer <token>` with every upload when set. Change it at run time with
    /// ``Tracker/setToken(_:)`` (which also ends a pause after a 401 or 403).
    public var token: String?
    /// When uploads may run: `UploadPolicy.always` (the default), `UploadPolicy.unmeteredOnly` (on Apple
    /// platforms, no cellular or Low Data Mode), or `UploadPolicy.custom(_:)`.
    public var uploadPolicy: UploadPolicy = .always
    /// The longest one upload request may take before it counts as failed and is retried. Default 30 s.
    public var requestTimeout: Duration = .seconds(30)
    /// The most upload requests on the wire at once, 1 to 16 (the outbox holds at most 16 batches). Default 4.
    /// Batches still leave the outbox in order, and after a failure uploads go one batch at a time until one
    /// succeeds (docs/upload.md).
    public var maxBatchesInFlight: Int = 4
    /// What upload requests go through; `nil` uses Foundation's `URLSession` (`URLSessionHTTPClient`). A server
    /// host can bring its own client; tests script answers.
    public var httpClient: (any HTTPTransportClient)?
    /// Watches the network for the upload policy and a prompt retry when it returns; `nil` uses `NWPathMonitor` on
    /// Apple platforms and nothing elsewhere.
    public var networkMonitor: (any NetworkMonitor)?
    /// The delays between failed upload attempts: exponential with full jitter, 1 s base and 5 min cap by
    /// default.
    public var uploadBackoff = Backoff()
    /// The uploader's time (backoff, `Retry-After`, request timeouts); `nil` uses the system clocks. For tests.
    public var uploadClock: (any UploadClock)?
    /// The uploader's jitter; `nil` uses the system generator. For tests.
    public var uploadRandom: (any RandomNumberGenerator & Sendable)?
    /// How many batches the `rejected` area keeps, and how many bytes. Default 64 batches, 8 MiB.
    public var rejectedLimits = RejectedArea.Limits()
    /// Upload when this many events are waiting. Default 100.
    public var flushBulkSize: Int = 100
    /// Upload at least this often while events are waiting and the app is started (always, without a lifecycle
    /// source). Default 15 s.
    public var flushInterval: Duration = .seconds(15)
    /// The most events the durable log keeps; beyond it the oldest are dropped and counted. Default 10,000.
    ///
    /// Raise it to keep more events through a long time offline; it costs disk, not memory
    /// (``maxBufferedEvents`` bounds memory).
    public var maxQueuedEvents: Int = 10_000
    /// The most accepted events waiting in memory for the writer (at least 4,096). When the writer falls this
    /// far behind, `track` waits for it rather than lose events or grow without bound; only a burst far above
    /// what the disk can take gets there. Default 10,000 (about 10 MiB of realistic events).
    public var maxBufferedEvents: Int = 10_000
    /// The most bytes the durable log may hold. Default 32 MiB.
    public var maxLogBytes: Int = 32 << 20
    /// When appended events are forced to disk. Default: at most once a second.
    public var durability: Durability = .batched(interval: .seconds(1))
    /// Compression for uploads. Default ``Codec/preferred``: zstd where this build has it (the `SystemLibraries`
    /// trait, on by default on Linux), gzip elsewhere (every Apple platform). `validate()` refuses a codec the build
    /// cannot write.
    public var codec: Codec = .preferred
    /// Which auto-track events are emitted. Default: none.
    public var autoTrack: AutoTrackOptions = []
    /// Whether events carry `$event_session_id`. Default off.
    public var enableSession: Bool = false
    /// A session ends after this long without events. Default 30 minutes.
    public var sessionIdleTimeout: Duration = .seconds(30 * 60)
    /// A session ends after this long whatever happens. Default 12 hours.
    public var sessionMaxDuration: Duration = .seconds(12 * 3600)
    /// The host application's version (`$app_version`); empty when unknown.
    public var appVersion: String = ""
    /// Where warnings (rejected events, storage trouble) are logged.
    public var logger: Logger = Logger(label: "spoor.tracker")
    /// Wall-clock time for event `time`.
    public var wallClock: any WallClock = SystemWallClock()
    /// Monotonic time for durations.
    public var monotonicClock: any MonotonicClock = SystemMonotonicClock()
    /// The time zone that decides calendar days (`$is_first_day`) and `$timezone_offset`.
    public var timeZone: TimeZone = .current
    /// Preset properties to use instead of reading them from the system, mainly for tests and
    /// platforms where the host knows better (screen size). Merged over what was read.
    public var presetOverrides: [String: PropertyValue] = [:]
    /// Called with every rejected event's reason (besides the log and the counters): on the calling thread,
    /// or on the writer thread for ``beforeRecord``'s rejections.
    public var onRejection: (@Sendable (EventRejection) -> Void)?

    // MARK: Consent

    /// Whether a fresh install starts opted out, for apps that ask the user first: nothing is recorded
    /// until ``Tracker/optIn()``. Once the user decided, the decision persists and this is not read again.
    /// Default false.
    public var startsOptedOut: Bool = false

    // MARK: Hook

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

    // MARK: Seeing what was tracked

    /// Debug mode (the Sensors SDK's debug mode, without the server side): every stored event is logged as
    /// one JSON line (the `spoor decode` form) through ``logger`` at `debug` level, from the writer thread,
    /// never the caller's. The logger's level must let `debug` through. Default off.
    public var logEvents: Bool = false

    /// Dimensions added to every swift-metrics counter the tracker exports (to tell trackers apart), such as
    /// `[("tracker", "main")]`. The counters are exported only when the host called `MetricsSystem.bootstrap`
    /// before creating the tracker: `spoor_events_accepted_total`, `spoor_events_rejected_total` (dimension
    /// `rule`) and `spoor_events_dropped_total` (dimension `reason`: `log`, `hook`, `shutdown`).
    public var metricsDimensions: [(String, String)] = []

    // MARK: Ignore lists

    /// Pages and clicks auto-tracking leaves out. Default: nothing.
    public var autoTrackIgnore = AutoTrackIgnoreList()

    /// How often, while the app is started, the lifecycle checkpoint records that the process is alive, so
    /// that a process killed without warning gets an `$AppEnd` timed close to its death at the next launch.
    /// Default 5 s. `nil` turns the timer off: a host that drives time itself (a manual clock in tests or
    /// simulations) calls ``Tracker/noteAlive()`` instead.
    public var heartbeatInterval: Duration? = .seconds(5)

    // MARK: Auto-capture

    /// What the `SpoorAutoCapture` module captures without code on Apple platforms: page views from view
    /// controllers, clicks from controls, cells, gestures and alert actions. Default: nothing. The events
    /// themselves still need ``autoTrack`` (`.appViewScreen`, `.appPageLeave`, `.appClick`).
    public var autoCapture: AutoCaptureOptions = []

    /// Creates a configuration with default values for everything but the storage directory.
    public init(storageDirectory: URL) {
        self.storageDirectory = storageDirectory
    }

    /// Throws the first field that is out of range.
    public func validate() throws(ConfigurationError) {
        guard storageDirectory.isFileURL, !storageDirectory.path.isEmpty else {
            throw ConfigurationError(field: "storageDirectory", reason: "must be a file URL")
        }
        if let serverURL {
            let scheme = serverURL.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", serverURL.host != nil else {
                throw ConfigurationError(field: "serverURL", reason: "must be an http or https URL with a host")
            }
        }
        if let token, token.isEmpty || token.contains(where: { $0.isNewline || $0 == "\0" }) {
            throw ConfigurationError(field: "token", reason: "must be non-empty, on one line")
        }
        guard requestTimeout >= .milliseconds(100), requestTimeout <= .seconds(600) else {
            throw ConfigurationError(field: "requestTimeout", reason: "must be between 100 ms and 10 minutes, got \(requestTimeout)")
        }
        guard uploadBackoff.base >= .milliseconds(1), uploadBackoff.cap >= uploadBackoff.base,
              uploadBackoff.cap <= .seconds(86_400) else {
            throw ConfigurationError(
                field: "uploadBackoff",
                reason: "needs a base of at least 1 ms and a cap between the base and one day, got \(uploadBackoff.base) and \(uploadBackoff.cap)")
        }
        guard (1...16).contains(maxBatchesInFlight) else {
            throw ConfigurationError(field: "maxBatchesInFlight", reason: "must be between 1 and 16, got \(maxBatchesInFlight)")
        }
        guard rejectedLimits.maxBatches >= 1, rejectedLimits.maxBytes >= 1024 else {
            throw ConfigurationError(field: "rejectedLimits", reason: "must keep at least 1 batch and 1 KiB")
        }
        guard (1...10_000).contains(flushBulkSize) else {
            throw ConfigurationError(field: "flushBulkSize", reason: "must be between 1 and 10000, got \(flushBulkSize)")
        }
        guard flushInterval >= .milliseconds(100), flushInterval <= .seconds(24 * 3600) else {
            throw ConfigurationError(field: "flushInterval", reason: "must be between 100 ms and 24 h, got \(flushInterval)")
        }
        guard maxQueuedEvents >= flushBulkSize, maxQueuedEvents <= 100_000_000 else {
            throw ConfigurationError(
                field: "maxQueuedEvents", reason: "must be at least flushBulkSize (\(flushBulkSize)), got \(maxQueuedEvents)")
        }
        guard maxBufferedEvents >= 1, maxBufferedEvents <= 10_000_000 else {
            throw ConfigurationError(field: "maxBufferedEvents", reason: "must be between 1 and 10,000,000, got \(maxBufferedEvents)")
        }
        guard codec.isAvailable else {
            throw ConfigurationError(field: "codec", reason: "\(codec) is not in this build (it needs the SystemLibraries trait); use gzip")
        }
        guard maxLogBytes >= 64 << 10 else {
            throw ConfigurationError(field: "maxLogBytes", reason: "must be at least 64 KiB, got \(maxLogBytes)")
        }
        if case .batched(let interval) = durability, interval <= .zero {
            throw ConfigurationError(field: "durability", reason: "batched interval must be positive")
        }
        guard sessionIdleTimeout > .zero else {
            throw ConfigurationError(field: "sessionIdleTimeout", reason: "must be positive")
        }
        guard sessionMaxDuration >= sessionIdleTimeout else {
            throw ConfigurationError(field: "sessionMaxDuration", reason: "must be at least sessionIdleTimeout")
        }
        if let heartbeatInterval, heartbeatInterval < .milliseconds(100) {
            throw ConfigurationError(field: "heartbeatInterval", reason: "must be at least 100 ms, or nil, got \(heartbeatInterval)")
        }
        for (key, value) in presetOverrides {
            if let error = PropertyValidator.check(key: key, value: value, event: "presetOverrides") {
                throw ConfigurationError(field: "presetOverrides", reason: error.description)
            }
        }
    }
}
