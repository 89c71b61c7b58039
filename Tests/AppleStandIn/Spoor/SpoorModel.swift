// The SpoorModel declarations the auto-capture module uses, with their signatures in Sources/SpoorModel, for
// scripts/typecheck-apple-glue: the real module builds against the real Foundation, which the stand-in SDK
// replaces. The model files are type-checked against the real module by `swift build`; this only has to let
// them, and the glue, type-check again beside the stand-in SDK.

/// A typed property value.
public enum PropertyValue: Sendable, Hashable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case date(Int64)
    case list([String])
}

/// An event's properties, keyed by property name.
public typealias Properties = [String: PropertyValue]

extension PropertyValue: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self = .string(value) }
}
