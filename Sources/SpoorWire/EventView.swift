internal import CSpoorViews
public import SpoorModel

/// One decoded event, borrowed from the decoder: its strings are UTF-8 bytes in the decoder's memory, valid
/// only inside the closure that receives the view (``EventDecoder/forEachEventView(inBatch:_:)``).
///
/// For readers that turn many events into another form (the collector's rows) and would otherwise build an
/// `Event` — a dictionary and two `String`s per property — only to take it apart again. The bytes are
/// validated UTF-8 without NUL, as for `Event`; properties are in wire order and may repeat a key (an
/// `Event` keeps the last).
public struct EventView {
    fileprivate let view: spoor_event_view

    init(_ view: spoor_event_view) { self.view = view }

    /// The event name's bytes.
    public var name: UnsafeRawBufferPointer { Self.bytes(view.event) }
    /// The record's type.
    public var type: EventType { EventType(rawValue: view.type) }
    /// Wall-clock time, epoch milliseconds (the shared context's offset already added).
    public var time: EpochMilliseconds { view.time }
    /// The random id of the record.
    public var trackID: UInt64 { view.track_id }
    /// The install's sequence number (the shared context's offset already added).
    public var sequence: UInt64 { view.sequence }
    /// The distinct id's bytes.
    public var distinctID: UnsafeRawBufferPointer { Self.bytes(view.distinct_id) }
    /// The anonymous id's bytes.
    public var anonymousID: UnsafeRawBufferPointer { Self.bytes(view.anonymous_id) }
    /// The login id's bytes; empty when there is none.
    public var loginID: UnsafeRawBufferPointer { Self.bytes(view.login_id) }
    /// The session id's bytes; empty when there is none.
    public var sessionID: UnsafeRawBufferPointer { Self.bytes(view.session_id) }
    /// The library name's bytes (`LibInfo.lib`).
    public var lib: UnsafeRawBufferPointer { Self.bytes(view.lib) }
    /// The library version's bytes.
    public var libVersion: UnsafeRawBufferPointer { Self.bytes(view.lib_version) }
    /// How the event was tracked.
    public var libMethod: LibMethod { LibMethod(rawValue: view.lib_method) }
    /// The app version's bytes.
    public var appVersion: UnsafeRawBufferPointer { Self.bytes(view.app_version) }
    /// How many properties the event carries (a repeated key counts each time).
    public var propertyCount: Int { view.prop_count }

    /// The property at `index` (0 ..< ``propertyCount``), in wire order.
    public func property(_ index: Int) -> PropertyView {
        precondition(index >= 0 && index < view.prop_count, "property index out of range")
        return PropertyView(view.props[index])
    }

    fileprivate static func bytes(_ view: spoor_str_view) -> UnsafeRawBufferPointer {
        guard view.len > 0, let pointer = view.ptr else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: view.len)
    }
}

/// One property of an ``EventView``, borrowed like it.
public struct PropertyView {
    private let prop: spoor_prop_view

    init(_ prop: spoor_prop_view) { self.prop = prop }

    /// What the value holds.
    public enum Kind: Sendable, Hashable {
        /// A UTF-8 string: ``PropertyView/string``.
        case string
        /// A 64-bit integer: ``PropertyView/integer``.
        case int
        /// A double: ``PropertyView/double``.
        case double
        /// A flag: ``PropertyView/bool``.
        case bool
        /// A time, epoch milliseconds: ``PropertyView/integer``.
        case date
        /// A list of strings: ``PropertyView/listCount`` and ``PropertyView/listItem(_:)``.
        case list
    }

    /// The key's bytes.
    public var key: UnsafeRawBufferPointer { EventView.bytes(prop.key) }

    /// The value's kind.
    public var kind: Kind {
        switch Int(prop.kind) {
        case Int(SPOOR_KIND_STRING): .string
        case Int(SPOOR_KIND_INT): .int
        case Int(SPOOR_KIND_DOUBLE): .double
        case Int(SPOOR_KIND_BOOL): .bool
        case Int(SPOOR_KIND_DATE): .date
        default: .list
        }
    }

    /// The string's bytes, for ``Kind/string``.
    public var string: UnsafeRawBufferPointer { EventView.bytes(prop.str) }
    /// The number, for ``Kind/int``; epoch milliseconds for ``Kind/date``.
    public var integer: Int64 { prop.integer }
    /// The number, for ``Kind/double``.
    public var double: Double { prop.real }
    /// The flag, for ``Kind/bool``.
    public var bool: Bool { prop.integer != 0 }
    /// How many strings the list holds, for ``Kind/list``.
    public var listCount: Int { prop.list_count }

    /// The bytes of the list's string at `index`, for ``Kind/list``.
    public func listItem(_ index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < prop.list_count, "list index out of range")
        return EventView.bytes(prop.list[index])
    }

    /// The value as a `PropertyValue` (allocates its strings).
    public var value: PropertyValue {
        switch kind {
        case .string: .string(String(decoding: string, as: UTF8.self))
        case .int: .int(integer)
        case .double: .double(double)
        case .bool: .bool(bool)
        case .date: .date(integer)
        case .list: .list((0..<listCount).map { String(decoding: listItem($0), as: UTF8.self) })
        }
    }
}
