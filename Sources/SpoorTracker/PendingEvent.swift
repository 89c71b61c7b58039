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
    /// The ids the event names besides the tracker's, in one string so the pending event is no bigger than it was
    /// before per-call ids (it is moved several times in every `track`, and a larger one is moved by `memmove`):
    /// a `$SignUp`'s original id, a per-call event's own id, or for a per-call `$SignUp` both, split by U+0000
    /// (which no valid id holds). Read through ``originalID`` and ``callerID``.
    private var ids: String?
    // Assigned under the pipeline lock, so they follow the order events enter the log. The snapshot and the
    // session are not retained: the pipeline keeps them alive until the writer has written the event
    // (the writer queue's retired objects), so a caller never touches a reference count the writer's core also touches.
    package var sequence: UInt64 = 0
    package var snapshot: Unmanaged<Snapshot>? = nil
    package var session: Unmanaged<Session>? = nil

    var isProfile: Bool { type != .track && type != .trackSignup }

    /// The `$SignUp`'s original (anonymous) id.
    package var originalID: String? {
        guard type == .trackSignup, let ids else { return nil }
        guard let split = ids.utf8.firstIndex(of: 0) else { return ids }
        return String(ids[ids.utf8.index(after: split)...])
    }

    /// The call's own id for a per-call event (``Tracker/track(_:distinctID:properties:)``, the profile
    /// operations with `distinctID:`, ``Tracker/trackSignUp(loginID:anonymousID:)``: there the login id); `nil`
    /// for the tracker's identity. A per-call event takes no part in the tracker's session.
    package var callerID: String? {
        guard type == .trackSignup else { return ids }
        guard let ids, let split = ids.utf8.firstIndex(of: 0) else { return nil }
        return String(ids[..<split])
    }

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
        if type == .trackSignup {
            ids = callerID.map { "\($0)\u{0}\(originalID ?? "")" } ?? originalID
        } else {
            ids = callerID
        }
        self.sequence = sequence
        self.snapshot = snapshot
        self.session = session
    }
}
