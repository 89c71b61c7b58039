import SpoorModel

/// Identity and the merged preset + super properties, immutable; replaced whole when either changes,
/// so `track` captures it with one retain.
package final class Snapshot: Sendable {
    package let distinctID: String
    package let anonymousID: String
    package let loginID: String?
    package let deviceID: String
    /// Preset properties, then super properties over them, then `$device_id` (never overridable).
    package let base: Properties
    let libCode: LibInfo
    let libAuto: LibInfo
    package let firstDay: Range<EpochMilliseconds>
    /// Whether there are super properties, which the event's own keys might collide with.
    let hasSuperProperties: Bool
    /// The keys an event's own properties may not share for the event to extend the context (`collides`).
    let collisionKeys: CollisionKeys

    package init(state: PersistedState, context: PipelineContext) {
        hasSuperProperties = !state.superProperties.isEmpty
        anonymousID = state.anonymousID
        loginID = state.loginID
        distinctID = state.loginID ?? state.anonymousID
        deviceID = state.deviceID
        // Room for the call-site properties, so the writer's copy does not grow while merging.
        var base = Properties(minimumCapacity: context.preset.count + state.superProperties.count + 32)
        for (key, value) in context.preset { base[key] = value }
        for (key, value) in state.superProperties { base[key] = value.value }
        base["$device_id"] = .string(state.deviceID)
        base["$event_session_id"] = nil
        self.base = base
        collisionKeys = CollisionKeys(Array(base.keys) + ["$is_first_day", "$event_session_id"])
        libCode = LibInfo(lib: context.platform, libVersion: PresetProperties.libVersion, method: .code, appVersion: context.appVersion)
        libAuto = LibInfo(lib: context.platform, libVersion: PresetProperties.libVersion, method: .autoTrack, appVersion: context.appVersion)
        firstDay = context.firstDay
    }
}
