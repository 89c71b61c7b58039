public import SpoorModel

/// An event as ``Configuration/Tracking/beforeRecord`` sees it: after every property source is merged (preset,
/// super, dynamic super, call site, auto-track, `$is_first_day`), before it is validated and stored.
/// Only ``properties`` can be changed.
public struct HookEvent: Sendable {
    /// The event name, such as `BuyProduct` or `$AppStart`.
    public let name: String
    /// `track` or `track_signup` (profile records do not go through the hook).
    public let type: EventType
    /// When `track` was called, in epoch milliseconds.
    public let time: EpochMilliseconds
    /// The id analyses count by.
    public let distinctID: String
    /// The login id, when a user is logged in.
    public let loginID: String?
    /// Whether auto-tracking recorded it (`$lib_method` `autoTrack`).
    public let isAutoTracked: Bool
    /// The merged properties. Change, add or remove them; the result is validated as `track`'s are.
    /// `$device_id` is set again afterwards (it is never overridable).
    public var properties: Properties

    /// Creates an event (for testing a hook).
    public init(
        name: String, type: EventType = .track, time: EpochMilliseconds, distinctID: String, loginID: String? = nil,
        isAutoTracked: Bool = false, properties: Properties
    ) {
        self.name = name
        self.type = type
        self.time = time
        self.distinctID = distinctID
        self.loginID = loginID
        self.isAutoTracked = isAutoTracked
        self.properties = properties
    }
}

/// What ``Configuration/Tracking/beforeRecord`` decides for an event.
public enum HookDecision: Sendable, Hashable {
    /// Record the event, with the properties as the hook left them.
    case record
    /// Do not record it (counted in ``TrackerCounters/droppedByHook``).
    case drop
}
