// The SpoorTracker declarations the auto-capture module uses, with their signatures in Sources/SpoorTracker,
// for scripts/typecheck-apple-glue (see SpoorModel.swift for why). Bodies trap: nothing here runs.
public import Logging
@_exported public import SpoorModel
package import SpoorSystem  // as SpoorTracker re-exports it

public struct AutoCaptureOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let pages = AutoCaptureOptions(rawValue: 1 << 0)
    public static let clicks = AutoCaptureOptions(rawValue: 1 << 1)
    public static let childPages = AutoCaptureOptions(rawValue: 1 << 2)
}

public struct AutoTrackOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let appViewScreen = AutoTrackOptions(rawValue: 1 << 3)
    public static let appClick = AutoTrackOptions(rawValue: 1 << 4)
    public static let appPageLeave = AutoTrackOptions(rawValue: 1 << 5)
}

public struct AutoTrackIgnoreList: Sendable, Hashable {
    public var screenNames: Set<String>
    public var elementTypes: Set<String>
    public var elementIDs: Set<String>
    public init(screenNames: Set<String> = [], elementTypes: Set<String> = [], elementIDs: Set<String> = []) {
        fatalError()
    }
}

public struct PageInfo: Sendable, Hashable {
    public var screenName: String
    public var title: String
    public var url: String
    public var ignoresAutoTrack: Bool
    public var customProperties: Properties
    public init(
        screenName: String, title: String = "", url: String = "", ignoresAutoTrack: Bool = false,
        customProperties: Properties = [:]
    ) { fatalError() }
}

public struct AppClick: Sendable, Hashable {
    public var elementType: String
    public var elementContent: String
    public var elementID: String
    public var elementPosition: String?
    public var elementPath: String
    public var page: PageInfo?
    public var customProperties: Properties
    public init(
        elementType: String, elementContent: String = "", elementID: String = "", elementPosition: String? = nil,
        elementPath: String, page: PageInfo? = nil, customProperties: Properties = [:]
    ) { fatalError() }
}

public struct Configuration: Sendable {
    public struct AutoTrack: Sendable {
        public var events: AutoTrackOptions
        public var ignore: AutoTrackIgnoreList
        public var capture: AutoCaptureOptions
    }
    public struct Diagnostics: Sendable {
        public var logger: Logger
    }
    public var autoTrack: AutoTrack
    public var diagnostics: Diagnostics
}

public final class Tracker: Sendable {
    public let configuration: Configuration
    package let clock: any SpoorClock
    package func monotonicNanoseconds() -> UInt64 { fatalError() }
    init() { fatalError() }
    public func pageAppear(_ id: String, page: PageInfo) {}
    public func pageDisappear(_ id: String) {}
    package func pageDisappear(_ id: String, lastSeenWall: Int64, lastSeenMonotonic: UInt64) {}
    public func trackClick(_ click: AppClick) {}
}
