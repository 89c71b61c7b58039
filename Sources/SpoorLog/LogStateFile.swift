import SpoorWire
/// The `state` file: the head of the log, the counters, and the short corrupt regions already
/// counted, written atomically (temporary file and rename).
///
/// ```
/// 0   4   magic "SPST"
/// 4   4   u32 LE version (1)
/// 8   8   u64 LE head segment id
/// 16  8   u64 LE head offset
/// 24  64  8 × u64 LE counters: dropped, corrupt, tornTails, writeErrors, quarantined, sealed, released, rejected
/// 88  4   u32 LE n, the number of short regions (at most 64)
/// 92  12n n × (u64 LE segment id, u32 LE offset): corrupt regions too short to pad over
/// end 4   u32 LE CRC-32C of everything before it
/// ```
enum LogStateFile {
    static let magic: [UInt8] = Array("SPST".utf8)
    static let maxShortRegions = 64

    struct Contents {
        var head: LogPosition
        var counters: LogCounters
        var shortRegions: Set<LogPosition>
    }

    static func encode(head: LogPosition, counters: LogCounters, shortRegions: Set<LogPosition>) -> [UInt8] {
        var bytes = magic
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        put(UInt32(1))
        put(head.segment)
        put(UInt64(head.offset))
        for value in [counters.dropped, counters.corrupt, counters.tornTails, counters.writeErrors,
                      counters.quarantined, counters.sealed, counters.released, counters.rejected] {
            put(value)
        }
        // The newest regions matter most: older ones sit in segments that go first.
        let kept = shortRegions.sorted().suffix(maxShortRegions)
        put(UInt32(kept.count))
        for region in kept {
            put(region.segment)
            put(UInt32(truncatingIfNeeded: region.offset))
        }
        put(CRC32C.checksum(bytes))
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> Contents? {
        guard bytes.count >= 96, bytes.starts(with: magic) else { return nil }
        return bytes.withUnsafeBytes { raw in
            func get(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            func get32(_ offset: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
            let count = Int(get32(88))
            guard get32(4) == 1, count <= maxShortRegions, bytes.count == 96 + 12 * count,
                  get32(bytes.count - 4) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<(bytes.count - 4)])),
                  get(16) <= UInt64(UInt32.max)
            else { return nil }
            var counters = LogCounters()
            counters.dropped = get(24)
            counters.corrupt = get(32)
            counters.tornTails = get(40)
            counters.writeErrors = get(48)
            counters.quarantined = get(56)
            counters.sealed = get(64)
            counters.released = get(72)
            counters.rejected = get(80)
            var regions: Set<LogPosition> = []
            for index in 0..<count {
                regions.insert(LogPosition(segment: get(92 + 12 * index), offset: Int(get32(100 + 12 * index))))
            }
            return Contents(head: LogPosition(segment: get(8), offset: Int(get(16))), counters: counters, shortRegions: regions)
        }
    }
}

extension LogStateFile {
    /// What the state file and the fsyncs have caught up with, and what changed since: the log decides under its
    /// state lock what a sync must do, and does it outside.
    struct Progress {
        /// Bumped by every change the state file records (counters, a seal or release, a drop).
        var version: UInt64 = 0
        /// The version and head the state file holds.
        var persistedVersion: UInt64 = 0
        var persistedHead = LogPosition(segment: 0, offset: 0)
        /// Corrupt regions too short to pad over, already counted; kept in the state file.
        var shortRegions: Set<LogPosition> = []
        /// Segments written since the last sync.
        var unsynced: Set<UInt64> = []
        /// Files were created, renamed or deleted in the directory since the last sync.
        var directoryDirty = false
        /// When the last sync was decided (for `.batched` durability).
        var lastSync: Int64 = 0
    }
}
