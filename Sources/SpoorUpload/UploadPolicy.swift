/// What the uploader knows about the network right now.
public struct NetworkStatus: Sendable, Hashable {
    /// Whether a route exists; nil when nothing watches the network (Linux).
    public var isAvailable: Bool?
    /// The route is metered: cellular, or a hotspot (Apple's `NWPath.isExpensive`).
    public var isExpensive: Bool
    /// The user turned on Low Data Mode (Apple's `NWPath.isConstrained`).
    public var isConstrained: Bool

    /// Creates a status.
    public init(isAvailable: Bool? = nil, isExpensive: Bool = false, isConstrained: Bool = false) {
        self.isAvailable = isAvailable
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }

    /// Nothing is known: the status where no monitor runs.
    public static let unknown = NetworkStatus()
}

/// When uploads may run (for example only on unmetered networks). Batches wait in the outbox while the policy says no,
/// and go at the next trigger once it says yes.
public struct UploadPolicy: Sendable {
    private let decide: @Sendable (NetworkStatus) -> Bool
    /// A short name for logs and `spoor inspect`: `always`, `unmetered-only` or `custom`.
    public let name: String

    private init(name: String, decide: @escaping @Sendable (NetworkStatus) -> Bool) {
        self.name = name
        self.decide = decide
    }

    /// Upload on any network (the default).
    public static let always = UploadPolicy(name: "always") { _ in true }

    /// Upload only on a network that is neither expensive nor constrained. It needs a network monitor: on
    /// Apple platforms `NWPathMonitor` (see `PathNetworkMonitor`); where none runs (Linux) the network is
    /// unknown and uploads go.
    public static let unmeteredOnly = UploadPolicy(name: "unmetered-only") { status in
        !(status.isExpensive || status.isConstrained)
    }

    /// The host decides, from the network status and anything else it knows (battery, user setting). Called
    /// off the main thread before every batch; keep it quick.
    public static func custom(_ allows: @escaping @Sendable (NetworkStatus) -> Bool) -> UploadPolicy {
        UploadPolicy(name: "custom", decide: allows)
    }

    /// Whether an upload may start now.
    public func allowsUpload(_ status: NetworkStatus) -> Bool {
        if status.isAvailable == false { return false }
        return decide(status)
    }
}

/// Watches the network for the uploader: its status feeds the ``UploadPolicy``, and a network that comes back
/// triggers a prompt retry instead of waiting out the backoff.
public protocol NetworkMonitor: Sendable {
    /// Starts watching; `onChange` gets every new status (on any thread).
    func start(onChange: @escaping @Sendable (NetworkStatus) -> Void)
    /// Stops watching.
    func stop()
}

#if canImport(Network)
import Network
import Dispatch

/// A ``NetworkMonitor`` over `NWPathMonitor` (Apple platforms only; not compiled on Linux).
///
/// `satisfied` paths are available; `isExpensive` and `isConstrained` come from the path. The uploader starts
/// it when it starts and stops it when it stops.
public final class PathNetworkMonitor: NetworkMonitor, @unchecked Sendable {
    // @unchecked: NWPathMonitor is thread-safe; it is only started and cancelled.
    private let monitor = NWPathMonitor()
    private let queue = DispatchQueue(label: "spoor.network")

    /// Creates a monitor for every interface type.
    public init() {}

    public func start(onChange: @escaping @Sendable (NetworkStatus) -> Void) {
        monitor.pathUpdateHandler = { path in
            onChange(NetworkStatus(
                isAvailable: path.status == .satisfied, isExpensive: path.isExpensive, isConstrained: path.isConstrained))
        }
        monitor.start(queue: queue)
    }

    public func stop() { monitor.cancel() }
}
#endif
