public import Foundation
import SpoorSystem
import SpoorModel
import SpoorLog
public import SpoorUpload

/// What ``Tracker/flush(timeout:)`` did: the batches and events delivered, what is still pending and why.
public typealias FlushResult = UploadResult

extension Tracker {
    /// The uploader for `configuration`, or nil without a server URL.
    static func makeUploader(configuration: Configuration, store: any EventStore) throws(ConfigurationError) -> Uploader? {
        guard let serverURL = configuration.upload.serverURL else { return nil }
        guard let log = store.durableLog else {
            throw ConfigurationError(field: "upload.serverURL", reason: "uploads are sent from the durable log, and this tracker's store keeps none")
        }
        let upload = configuration.uploadConfiguration(endpoint: batchEndpoint(serverURL))
        let uploader: Uploader
        do {
            uploader = try Uploader(log: log, configuration: upload, logger: configuration.diagnostics.logger)
        } catch {
            throw ConfigurationError(field: "storageDirectory", reason: "the upload's rejected area cannot be created: \(error)")
        }
        // An upload starts as soon as `upload.flushBulkSize` events wait, not only at the flush interval.
        let bulk = configuration.upload.flushBulkSize
        store.onAppend { [weak uploader] waiting in if waiting >= bulk { uploader?.trigger() } }
        return uploader
    }

    /// `serverURL` itself when it names a path, else its `/v1/batch`.
    public static func batchEndpoint(_ serverURL: URL) -> URL {
        let path = serverURL.path
        if !path.isEmpty, path != "/" { return serverURL }
        return serverURL.appendingPathComponent("v1").appendingPathComponent("batch")
    }

    /// Events not yet delivered: in the log and in sealed batches.
    var pendingEventCount: Int {
        guard let log = pipeline.store.durableLog else { return 0 }
        return log.recordCount + log.pendingBatches().reduce(0) { $0 + $1.recordCount }
    }

    /// Replaces the upload token (``Configuration/Upload/token``); uploads paused after a 401 or 403 resume.
    public func setToken(_ token: String?) {
        uploader?.setToken(token)
    }

    /// Uploads what is pending inside a background-task window from `hook`: begun now, ended when the upload
    /// finishes, when the window's time is up, or when the system says it expires, whichever comes first.
    func uploadInBackground(_ hook: BackgroundTaskHook) {
        guard uploader != nil else { return }
        let finished = Promise<Bool>()
        let identifier = hook.begin("spoor.upload") { finished.fulfil(false) }
        Task { [weak self] in
            guard let self else {
                finished.fulfil(false)
                return
            }
            _ = await self.flush(timeout: hook.window)
            finished.fulfil(true)
        }
        Task {
            _ = await finished.value
            hook.end(identifier)
        }
    }
}

/// How a tracker asks the host for background time to finish an upload when the app goes to the background
/// (UIKit's `beginBackgroundTask` / `endBackgroundTask`), set on ``NotificationCenterLifecycleSource/backgroundTask``.
///
/// Spoor does not import UIKit, so the host passes the two calls in:
///
/// ```swift
/// source.backgroundTask = BackgroundTaskHook(
///     begin: { name, expired in
///         MainActor.assumeIsolated {
///             UIApplication.shared.beginBackgroundTask(withName: name, expirationHandler: expired).rawValue
///         }
///     },
///     end: { id in
///         MainActor.assumeIsolated { UIApplication.shared.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: id)) }
///     })
/// ```
///
/// On `didEnterBackground` the tracker calls `begin`, uploads what is pending for at most ``window``, and calls
/// `end` once, before the window closes or as soon as `expired` runs. The batches left go at the next trigger.
public struct BackgroundTaskHook: Sendable {
    /// Starts a background task named `name`; `expired` must be called if the system ends it early. Returns the
    /// task's identifier, handed back to `end`.
    public var begin: @Sendable (_ name: String, _ expired: @escaping @Sendable () -> Void) -> Int
    /// Ends the background task with this identifier.
    public var end: @Sendable (Int) -> Void
    /// The longest the upload runs in the background (default 25 s, within iOS's usual 30 s).
    public var window: Duration

    /// Creates a hook.
    public init(window: Duration = .seconds(25), begin: @escaping @Sendable (String, @escaping @Sendable () -> Void) -> Int,
                end: @escaping @Sendable (Int) -> Void) {
        self.window = window
        self.begin = begin
        self.end = end
    }
}
