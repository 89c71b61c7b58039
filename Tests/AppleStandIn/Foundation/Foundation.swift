// The stand-in for the SDK's Foundation Swift overlay: the bridges from Foundation.h's classes to the Swift
// types the glue sees (String, Array, Set, IndexPath), and the overlay's Swift API the auto-capture model files use
// (`String(format:)`, `trimmingCharacters(in:)`), with the SDK's signatures. Declarations only: every body
// traps, and nothing here runs.
@_exported import Foundation
@_exported import ObjectiveC

extension String: @retroactive _ObjectiveCBridgeable {
    public func _bridgeToObjectiveC() -> NSString { fatalError() }
    public static func _forceBridgeFromObjectiveC(_ source: NSString, result: inout String?) { fatalError() }
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSString, result: inout String?) -> Bool { fatalError() }
    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSString?) -> String { fatalError() }
}

extension Array: @retroactive _ObjectiveCBridgeable {
    public func _bridgeToObjectiveC() -> NSArray { fatalError() }
    public static func _forceBridgeFromObjectiveC(_ source: NSArray, result: inout Array?) { fatalError() }
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSArray, result: inout Array?) -> Bool { fatalError() }
    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSArray?) -> Array { fatalError() }
}

extension Set: @retroactive _ObjectiveCBridgeable {
    public func _bridgeToObjectiveC() -> NSSet { fatalError() }
    public static func _forceBridgeFromObjectiveC(_ source: NSSet, result: inout Set?) { fatalError() }
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSSet, result: inout Set?) -> Bool { fatalError() }
    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSSet?) -> Set { fatalError() }
}

/// A path into a tree of indexes (UIKit's overlay gives it sections and items).
public struct IndexPath: Hashable, Sendable {}

extension IndexPath: _ObjectiveCBridgeable {
    public func _bridgeToObjectiveC() -> NSIndexPath { fatalError() }
    public static func _forceBridgeFromObjectiveC(_ source: NSIndexPath, result: inout IndexPath?) { fatalError() }
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSIndexPath, result: inout IndexPath?) -> Bool { fatalError() }
    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSIndexPath?) -> IndexPath { fatalError() }
}

/// A set of Unicode characters, for trimming.
public struct CharacterSet: Hashable, Sendable {
    public static var whitespacesAndNewlines: CharacterSet { fatalError() }
}

extension StringProtocol {
    public func trimmingCharacters(in set: CharacterSet) -> String { fatalError() }
}

extension String {
    public init(format: String, _ arguments: any CVarArg...) { fatalError() }
}
