public import Foundation

/// Milliseconds since 1970-01-01T00:00:00Z.
public typealias EpochMilliseconds = Int64

/// A typed property value: the six types an event property may hold.
///
/// Literals make call sites short:
/// ```swift
/// let properties: Properties = ["product": "tea", "count": 2, "price": 3.5, "gift": false, "tags": ["a", "b"]]
/// ```
public enum PropertyValue: Sendable, Hashable {
    /// UTF-8 text.
    case string(String)
    /// A signed 64-bit integer.
    case int(Int64)
    /// A finite double.
    case double(Double)
    /// A boolean.
    case bool(Bool)
    /// A point in time, in milliseconds since the Unix epoch.
    case date(EpochMilliseconds)
    /// A list of strings.
    case list([String])

    /// A date value from a `Date`, kept to the millisecond.
    public init(_ date: Date) {
        self = .date(EpochMilliseconds((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// The value's type name, as used in error messages: `string`, `int`, `double`, `bool`, `date` or `list`.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .int: "int"
        case .double: "double"
        case .bool: "bool"
        case .date: "date"
        case .list: "list"
        }
    }
}

/// An event's properties, keyed by property name.
public typealias Properties = [String: PropertyValue]

extension PropertyValue: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension PropertyValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension PropertyValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension PropertyValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PropertyValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: String...) { self = .list(elements) }
}
