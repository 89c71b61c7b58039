import Foundation

/// The keys an event's own properties must not share with the snapshot's base for the event to extend the
/// log's context record: the base's keys, `$is_first_day` and `$event_session_id`.
///
/// The writer asks once per own key of almost every event, so the answer avoids hashing: keys are bucketed by
/// UTF-8 length, and a key is compared byte for byte only with the few base keys of its length.
package struct CollisionKeys: Sendable {
    /// `buckets[n]`: the UTF-8 bytes of every key of n bytes, back to back.
    private var buckets: [[UInt8]]

    package init(_ keys: some Sequence<String>) {
        var buckets = [[UInt8]](repeating: [], count: 1)
        for key in keys {
            let length = key.utf8.count
            if length >= buckets.count { buckets += [[UInt8]](repeating: [], count: length + 1 - buckets.count) }
            buckets[length] += Array(key.utf8)
        }
        self.buckets = buckets
    }

    @inline(__always)
    package func contains(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { bytes in
            guard bytes.count < buckets.count, bytes.count > 0 else { return false }
            return buckets[bytes.count].withUnsafeBytes { bucket in
                var offset = 0
                while offset < bucket.count {
                    if memcmp(bucket.baseAddress! + offset, bytes.baseAddress!, bytes.count) == 0 { return true }
                    offset += bytes.count
                }
                return false
            }
        }
    }
}
