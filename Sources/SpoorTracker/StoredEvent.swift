package import SpoorModel

/// A finished record as the writer hands it to the store.
package struct StoredEvent {
    /// The record. When `base` is set it holds only the event's own fields: name, type, time, sequence, the lib
    /// method (lib's strings empty), its own properties (dynamic super properties and call site, none of which
    /// is a key of `base`), session and original id, and the distinct id only when it is not the snapshot's
    /// (else empty); the anonymous and login ids are left out. Otherwise it is complete.
    package var event: Event
    /// What the event shares with others (ids, lib, preset and super properties), and `$is_first_day` over them.
    var base: Snapshot?
    /// `$is_first_day` for this event.
    package var firstDay: Bool

    /// A complete record, with nothing shared (what an in-memory store takes).
    package init(complete event: Event, firstDay: Bool) {
        self.init(event: event, base: nil, firstDay: firstDay)
    }

    init(event: Event, base: Snapshot?, firstDay: Bool) {
        self.event = event
        self.base = base
        self.firstDay = firstDay
    }

    /// The complete record: preset and super properties first, then dynamic super properties, then the call
    /// site's, then `$is_first_day`, and `$device_id` last, so that no event can override it.
    package var merged: Event {
        guard let base else { return event }
        var event = event
        if event.distinctID.isEmpty { event.distinctID = base.distinctID }
        event.anonymousID = base.anonymousID
        event.loginID = base.loginID
        event.lib = event.lib.method == .autoTrack ? base.libAuto : base.libCode
        event.properties = Self.merge(base: base, dynamic: nil, own: event.properties, firstDay: firstDay)
        return event
    }

    static func merge(base snapshot: Snapshot, dynamic: Properties?, own: Properties, firstDay: Bool) -> Properties {
        var properties = snapshot.base  // 1. preset, 2. super properties
        if let dynamic {  // 2. dynamic super properties
            for (key, value) in dynamic { properties[key] = value }
        }
        for (key, value) in own { properties[key] = value }  // 3. call site (4. auto-track)
        properties["$is_first_day"] = .bool(firstDay)  // 4.
        properties["$device_id"] = .string(snapshot.deviceID)  // 5. never overridable
        properties["$event_session_id"] = nil  // it travels in its own field
        return properties
    }
}
