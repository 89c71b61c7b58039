import Testing

import SpoorTracker

@Suite struct CollisionKeysTests {
    @Test func findsExactlyTheKeysItHolds() {
        let keys = CollisionKeys(["$os", "$model", "$is_first_day", "plan", "$device_id", "Ünïcode"])
        for key in ["$os", "$model", "$is_first_day", "plan", "$device_id", "Ünïcode"] {
            #expect(keys.contains(key), "\(key)")
        }
        // Same lengths, other bytes; other lengths; empty; longer than any key held.
        for key in ["$oS", "$mode1", "$is_first_dax", "plam", "", "p", "$element_path_and_more", "Unicode"] {
            #expect(!keys.contains(key), "\(key)")
        }
        #expect(!CollisionKeys([]).contains("$os"))
    }
}
