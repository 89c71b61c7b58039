// The stand-in for the SDK's ObjectiveC Swift overlay: what the compiler needs for `#selector` and `BOOL`
// (`ObjCBool`, `Selector` and the two conversions it calls by name), over the runtime declarations of
// ObjectiveC.h. Declarations only: nothing here runs.
@_exported import ObjectiveC

/// `BOOL` as Swift sees it.
@frozen public struct ObjCBool {
    private var value: Int8
    public init(_ value: Bool) { self.value = value ? 1 : 0 }
    public var boolValue: Bool { value != 0 }
}

/// `SEL` as Swift sees it; `#selector` makes one.
@frozen public struct Selector: Hashable {
    private var pointer: OpaquePointer
}

public func _convertBoolToObjCBool(_ x: Bool) -> ObjCBool { ObjCBool(x) }
public func _convertObjCBoolToBool(_ x: ObjCBool) -> Bool { x.boolValue }
