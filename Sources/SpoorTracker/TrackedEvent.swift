public import SpoorModel

/// An event the app declares as a Swift type: its name and its typed properties.
///
/// ```swift
/// struct BuyProduct: TrackedEvent {
///     static let eventName = "BuyProduct"
///     var product: String
///     var price: Double
///     var properties: Properties { ["product": .string(product), "price": .double(price)] }
/// }
/// tracker.track(BuyProduct(product: "tea", price: 3.5))
/// ```
public protocol TrackedEvent: Sendable {
    /// The event name, checked like any other (docs/events.md, "Validation").
    static var eventName: String { get }
    /// The event's properties.
    var properties: Properties { get }
}

/// A preset event emitted by auto-tracking (docs/lifecycle.md), switched on and off by ``AutoTrackOptions``.
public protocol AutoTrackedEvent: TrackedEvent {
    /// The option that enables this event.
    static var option: AutoTrackOptions { get }
}
