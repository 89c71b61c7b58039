/// What kind of record an event is.
///
/// Protobuf enums are open: a type a newer Spoor adds reaches an older one as
/// ``unrecognized(_:)`` with its number, and is written back unchanged.
public enum EventType: Sendable, Hashable, CaseIterable, RawRepresentable {
    /// An ordinary event, from code or from auto-tracking.
    case track
    /// `$SignUp`, emitted when a user logs in.
    case trackSignup
    /// Sets profile properties.
    case profileSet
    /// Sets profile properties that are not set yet.
    case profileSetOnce
    /// Adds to numeric profile properties.
    case profileIncrement
    /// Appends to list profile properties.
    case profileAppend
    /// Removes profile properties.
    case profileUnset
    /// Deletes the whole profile.
    case profileDelete
    /// A type this version does not know, kept as its wire number.
    /// ``init(rawValue:)`` never makes one for a number a known case has.
    case unrecognized(Int32)

    /// The known types, in wire-number order.
    public static let allCases: [EventType] = [
        .track, .trackSignup, .profileSet, .profileSetOnce, .profileIncrement, .profileAppend, .profileUnset, .profileDelete,
    ]

    /// The type with wire number `rawValue`; unknown numbers become ``unrecognized(_:)``.
    public init(rawValue: Int32) {
        self = rawValue >= 1 && rawValue <= 8 ? Self.allCases[Int(rawValue) - 1] : .unrecognized(rawValue)
    }

    /// The wire number.
    public var rawValue: Int32 {
        switch self {
        case .track: 1
        case .trackSignup: 2
        case .profileSet: 3
        case .profileSetOnce: 4
        case .profileIncrement: 5
        case .profileAppend: 6
        case .profileUnset: 7
        case .profileDelete: 8
        case .unrecognized(let number): number
        }
    }

    /// The name used in JSON, such as `track` or `profile_set_once`; the decimal number for an unrecognized type.
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
        case .unrecognized(let number): String(number)
        }
    }

    /// The known type with the given JSON name, or `nil`.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

/// How an event was produced (`$lib_method`).
///
/// Open like ``EventType``: an unknown method is kept as ``unrecognized(_:)``.
public enum LibMethod: Sendable, Hashable, RawRepresentable {
    /// Not recorded.
    case unspecified
    /// The app called the tracker.
    case code
    /// Spoor produced it by auto-tracking.
    case autoTrack
    /// A method this version does not know, kept as its wire number.
    /// ``init(rawValue:)`` never makes one for a number a known case has.
    case unrecognized(Int32)

    /// The method with wire number `rawValue`; unknown numbers become ``unrecognized(_:)``.
    public init(rawValue: Int32) {
        switch rawValue {
        case 0: self = .unspecified
        case 1: self = .code
        case 2: self = .autoTrack
        default: self = .unrecognized(rawValue)
        }
    }

    /// The wire number.
    public var rawValue: Int32 {
        switch self {
        case .unspecified: 0
        case .code: 1
        case .autoTrack: 2
        case .unrecognized(let number): number
        }
    }

    /// The name used in JSON: `code`, `autoTrack` or an empty string; the decimal number for an unrecognized method.
    public var name: String {
        switch self {
        case .unspecified: ""
        case .code: "code"
        case .autoTrack: "autoTrack"
        case .unrecognized(let number): String(number)
        }
    }

    /// The known method with the given JSON name, or `nil`.
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
