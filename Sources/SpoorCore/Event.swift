/// What kind of record an event is.
public enum EventType: Int32, Sendable, Hashable, CaseIterable {
    /// An ordinary event, from code or from auto-tracking.
    case track = 1
    /// `$SignUp`, emitted when a user logs in.
    case trackSignup = 2
    /// Sets profile properties.
    case profileSet = 3
    /// Sets profile properties that are not set yet.
    case profileSetOnce = 4
    /// Adds to numeric profile properties.
    case profileIncrement = 5
    /// Appends to list profile properties.
    case profileAppend = 6
    /// Removes profile properties.
    case profileUnset = 7
    /// Deletes the whole profile.
    case profileDelete = 8

    /// The name used in JSON, such as `track` or `profile_set_once`.
    public var name: String {
        switch self {
        case .track: "track"
        case .trackSignup: "track_signup"
        case .profileSet: "profile_set"
        case .profileSetOnce: "profile_set_once"
        case .profileIncrement: "profile_increment"
        case .profileAppend: "profile_append"
        case .profileUnset: "profile_unset"
        case .profileDelete: "profile_delete"
        }
    }

    /// The type with the given JSON name, or `nil`.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

/// How an event was produced (`$lib_method`).
public enum LibMethod: Int32, Sendable, Hashable {
    /// Not recorded.
    case unspecified = 0
    /// The app called the tracker.
    case code = 1
    /// Spoor produced it by auto-tracking.
    case autoTrack = 2

    /// The name used in JSON: `code`, `autoTrack` or an empty string.
    public var name: String {
        switch self {
        case .unspecified: ""
        case .code: "code"
        case .autoTrack: "autoTrack"
        }
    }

    /// The method with the given JSON name, or `nil`.
    public init?(name: String) {
        switch name {
        case "": self = .unspecified
        case "code": self = .code
        case "autoTrack": self = .autoTrack
        default: return nil
        }
    }
}

/// The library that recorded an event.
public struct LibInfo: Sendable, Hashable {
    /// `$lib`: the platform, such as `Linux` or `iOS`.
    public var lib: String
    /// `$lib_version`: Spoor's version.
    public var libVersion: String
    /// `$lib_method`: code or auto-track.
    public var method: LibMethod
    /// `$app_version`: the host application's version, empty when unknown.
    public var appVersion: String

    /// Creates a library description.
    public init(lib: String, libVersion: String, method: LibMethod, appVersion: String = "") {
        self.lib = lib
        self.libVersion = libVersion
        self.method = method
        self.appVersion = appVersion
    }
}

/// One event record, as it is stored and sent.
public struct Event: Sendable, Hashable {
    /// The event name, such as `$AppStart` or `BuyProduct`; empty for profile records.
    public var name: String
    /// The record's type.
    public var type: EventType
    /// Wall-clock time when the event was tracked, in epoch milliseconds.
    public var time: EpochMilliseconds
    /// A random id of this record, for de-duplication by the collector.
    public var trackID: UInt64
    /// The install's sequence number for this record, increasing by one per record.
    public var sequence: UInt64
    /// The id analyses count by: the login id when logged in, else the anonymous id.
    public var distinctID: String
    /// The install's anonymous id.
    public var anonymousID: String
    /// The login id, when a user is logged in.
    public var loginID: String?
    /// The library that recorded the event.
    public var lib: LibInfo
    /// The merged properties.
    public var properties: Properties
    /// `$event_session_id`, when sessions are on.
    public var sessionID: String?
    /// For `$SignUp`: the anonymous id the login id is linked to.
    public var originalID: String?

    /// Creates an event record.
    public init(
        name: String,
        type: EventType = .track,
        time: EpochMilliseconds,
        trackID: UInt64 = 0,
        sequence: UInt64 = 0,
        distinctID: String,
        anonymousID: String,
        loginID: String? = nil,
        lib: LibInfo,
        properties: Properties = [:],
        sessionID: String? = nil,
        originalID: String? = nil
    ) {
        self.name = name
        self.type = type
        self.time = time
        self.trackID = trackID
        self.sequence = sequence
        self.distinctID = distinctID
        self.anonymousID = anonymousID
        self.loginID = loginID
        self.lib = lib
        self.properties = properties
        self.sessionID = sessionID
        self.originalID = originalID
    }
}
