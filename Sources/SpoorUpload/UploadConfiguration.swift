public import Foundation
public import SpoorWire
import SpoorModel
public import SpoorLog
public import SpoorSystem

/// How an ``Uploader`` sends batches.
public struct UploadConfiguration: Sendable {
    /// The collector's batch endpoint (`…/v1/batch`).
    public var url: URL
    /// Sent as `Authorization: Bearer <token>` when set.
    public var token: String?
    /// What requests go through (default: ``URLSessionHTTPClient``).
    public var client: any HTTPTransportClient
    /// When uploads may run (default ``UploadPolicy/always``).
    public var policy: UploadPolicy
    /// Watches the network: feeds the policy and retries promptly when the network returns. Default: `NWPathMonitor`
    /// on Apple platforms (`PathNetworkMonitor`), none elsewhere.
    public var networkMonitor: (any NetworkMonitor)?
    /// The longest a request may take (default 30 s); past it the attempt counts as failed and is retried.
    public var requestTimeout: Duration
    /// Delays between failed attempts (default 1 s base, 5 min cap, full jitter).
    public var backoff: Backoff
    /// The most events per batch (the tracker's `upload.flushBulkSize`, default 100).
    public var batchSize: Int
    /// The most payload bytes per batch before compression (default 512 KiB).
    public var maxBatchBytes: Int
    /// How batches are compressed (default ``/SpoorWire/Codec/preferred``: zstd where the build has it, else gzip).
    public var codec: Codec
    /// The most batches on the wire at once (default 4; at least 1). Batches still leave the outbox in order, and
    /// after a failure the uploader goes back to one batch at a time until an attempt succeeds. Values above the
    /// log's `maxPendingBatches` (16) gain nothing: the outbox holds no more.
    public var maxBatchesInFlight = 4
    /// While events wait, an upload is tried at least this often (default 15 s); nil for triggers only.
    public var flushInterval: Duration?
    /// Time: deadlines and backoff on its monotonic reading, `Retry-After` dates on its wall reading (default
    /// ``/SpoorSystem/SystemClock``; tests inject a manual clock).
    public var clock: any SpoorClock
    /// Jitter: injected by tests (default: the system generator).
    public var random: any RandomNumberGenerator & Sendable
    /// How much the rejected area keeps.
    public var rejectedLimits: RejectedArea.Limits
    /// The `User-Agent` header: `Spoor/<version> (<os>)`.
    public var userAgent: String
    /// Called after every request with what came of it, on the upload task (keep it quick). Default nil.
    public var onAttempt: (@Sendable (UploadAttempt) -> Void)?

    /// Creates a configuration with the defaults docs/upload.md lists.
    public init(url: URL, token: String? = nil) {
        self.url = url
        self.token = token
        client = URLSessionHTTPClient()
        policy = .always
        #if canImport(Network)
        networkMonitor = PathNetworkMonitor()
        #else
        networkMonitor = nil
        #endif
        requestTimeout = .seconds(30)
        backoff = Backoff()
        batchSize = 100
        maxBatchBytes = 512 << 10
        codec = .preferred
        flushInterval = .seconds(15)
        clock = SystemClock()
        random = SystemRandomNumberGenerator()
        rejectedLimits = RejectedArea.Limits()
        userAgent = Self.userAgent(version: SpoorVersion.current)
    }

    /// `Spoor/<version> (<os> <major>.<minor>)`, such as `Spoor/0.1.0 (Linux 6.1)`.
    public static func userAgent(version: String) -> String {
        #if os(iOS)
        let os = "iOS"
        #elseif os(macOS)
        let os = "macOS"
        #elseif os(tvOS)
        let os = "tvOS"
        #elseif os(watchOS)
        let os = "watchOS"
        #elseif os(Linux)
        let os = "Linux"
        #else
        let os = "unknown"
        #endif
        let version_ = ProcessInfo.processInfo.operatingSystemVersion
        return "Spoor/\(version) (\(os) \(version_.majorVersion).\(version_.minorVersion))"
    }
}
