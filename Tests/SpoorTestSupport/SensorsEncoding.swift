import Foundation
public import SpoorModel
import SpoorLog
import SpoorWire

/// What the Sensors Analytics SDKs upload for the same events: `base64(gzip(JSON array))`, the `data_list`
/// form field; the baseline of Spoor's wire-size figures.
public enum SensorsEncoding {
    /// The bytes Sensors' encoding of `events` takes, as one upload.
    public static func bytes(_ events: [Event]) throws -> Int {
        let array = events.map { json($0, flushTime: 1_763_769_700_000) }
        let data = try JSONSerialization.data(withJSONObject: array, options: [.sortedKeys])  // one stable order
        let gzipped = try Compression.gzip([UInt8](data), level: 6)
        return Data(gzipped).base64EncodedString().utf8.count
    }

    /// One event as Sensors' SDKs upload it: their key names, `lib` as an object, and `_flush_time`.
    ///
    /// Their `_track_id` is a random 31-bit number in every event whatever Spoor's event carries, so it is
    /// drawn here from the event's sequence (deterministic) rather than taken from `trackID`.
    public static func json(_ event: Event, flushTime: Int64) -> [String: Any] {
        var properties: [String: Any] = [:]
        for (key, value) in event.properties {
            switch value {
            case .string(let string): properties[key] = string
            case .int(let int): properties[key] = int
            case .double(let double): properties[key] = double
            case .bool(let bool): properties[key] = bool
            case .date(let millis): properties[key] = millis
            case .list(let items): properties[key] = items
            }
        }
        var random = SplitMix64(seed: event.sequence)
        return [
            "_track_id": Int64(truncatingIfNeeded: random.next()) & 0x7FFF_FFFF, "time": event.time, "type": "track",
            "distinct_id": event.distinctID, "anonymous_id": event.anonymousID, "event": event.name,
            "lib": [
                "$lib": event.lib.lib, "$lib_version": event.lib.libVersion,
                "$lib_method": event.lib.method == .autoTrack ? "autoTrack" : "code", "$app_version": event.lib.appVersion,
            ],
            "properties": properties, "_flush_time": flushTime,
        ]
    }
}
