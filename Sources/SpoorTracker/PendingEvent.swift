import SpoorModel

/// An event as the caller hands it on: captured and validated, not yet merged or encoded.
package struct PendingEvent {
    package var name: String
    package var type: EventType
    package var method: LibMethod
    package var time: EpochMilliseconds
    /// Call-site (or auto-track) properties, already validated.
    package var properties: Properties
    /// The dynamic super properties evaluated at `track` time, already validated.
    package var dynamicProperties: Properties?
    /// Some key starts with `$`, so the never-overridable keys are re-applied after merging.
    package var hasDollarKey: Bool
    package var originalID: String?
    /// The call's own id for a per-call event (``Tracker/track(_:distinctID:properties:)``, the profile
    /// operations with `distinctID:`, ``Tracker/trackSignUp(loginID:anonymousID:)``); `nil` for the tracker's
    /// identity. A per-call event takes no part in the tracker's session.
    package var callerID: String?
    // Assigned under the pipeline lock, so they follow the order events enter the log. The snapshot and the
    // session are not retained: the pipeline keeps them alive until the writer has written the event
    // (the writer queue's retired objects), so a caller never touches a reference count the writer's core also touches.
    package var sequence: UInt64 = 0
    package var snapshot: Unmanaged<Snapshot>? = nil
    package var session: Unmanaged<Session>? = nil

    var isProfile: Bool { type != .track && type != .trackSignup }

    /// An event holding nothing that is reference counted: what an event moved out of a variable leaves there.
    package static var empty: PendingEvent {
        PendingEvent(
            name: "", type: .track, method: .unspecified, time: 0, properties: [:], dynamicProperties: nil,
            hasDollarKey: false, originalID: nil, callerID: nil)
    }

    package init(
        name: String,
        type: EventType,
        method: LibMethod,
        time: EpochMilliseconds,
        properties: Properties,
        dynamicProperties: Properties?,
        hasDollarKey: Bool,
        originalID: String?,
        callerID: String? = nil,
        sequence: UInt64 = 0,
        snapshot: Unmanaged<Snapshot>? = nil,
        session: Unmanaged<Session>? = nil
    ) {
        self.name = name
        self.type = type
        self.method = method
        self.time = time
        self.properties = properties
        self.dynamicProperties = dynamicProperties
        self.hasDollarKey = hasDollarKey
        self.originalID = originalID
        self.callerID = callerID
        self.sequence = sequence
        self.snapshot = snapshot
        self.session = session
    }
}
