import SpoorModel

/// An event as the caller hands it on: captured and validated, not yet merged or encoded.
struct PendingEvent {
    var name: String
    var type: EventType
    var method: LibMethod
    var time: EpochMilliseconds
    /// Call-site (or auto-track) properties, already validated.
    var properties: Properties
    /// The dynamic super properties evaluated at `track` time, already validated.
    var dynamicProperties: Properties?
    /// Some key starts with `$`, so the never-overridable keys are re-applied after merging.
    var hasDollarKey: Bool
    var originalID: String?
    // Assigned under the pipeline lock, so they follow the order events enter the log. The snapshot and the
    // session are not retained: the pipeline keeps them alive until the writer has written the event
    // (the writer queue's retired objects), so a caller never touches a reference count the writer's core also touches.
    var sequence: UInt64 = 0
    var snapshot: Unmanaged<Snapshot>? = nil
    var session: Unmanaged<Session>? = nil

    var isProfile: Bool { type != .track && type != .trackSignup }

    /// An event holding nothing that is reference counted: what an event moved out of a variable leaves there.
    static var empty: PendingEvent {
        PendingEvent(
            name: "", type: .track, method: .unspecified, time: 0, properties: [:], dynamicProperties: nil,
            hasDollarKey: false, originalID: nil)
    }
}
