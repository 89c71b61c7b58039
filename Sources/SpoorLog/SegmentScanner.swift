import SpoorModel
/// The layout of segment files and the scan that recovers their records.
///
/// A segment file starts with a 16-byte header, then records back to back:
///
/// ```
/// offset  size  field
/// 0       4     magic "SPLG"
/// 4       2     u16 LE format version: 2 (may hold context records); 1 was written before them
/// 6       2     reserved, zero
/// 8       8     u64 LE segment id (also in the file name, seg-<16 hex digits>.log)
/// ```
package enum SegmentFormat {
    package static let magic: [UInt8] = Array("SPLG".utf8)
    /// The version new segments get. Version 2 segments may hold context records, which a reader of version 1
    /// would take for damage; it refuses the segment instead (moves it aside, keeping its records), so going
    /// back to an older Spoor never uploads events without the context they extend.
    package static let version: UInt16 = 2
    /// The versions this code reads.
    static let readableVersions: ClosedRange<UInt16> = 1...2
    package static let headerSize = 16

    package static func header(id: UInt64) -> [UInt8] {
        var bytes = magic
        withUnsafeBytes(of: version.littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [0, 0])
        withUnsafeBytes(of: id.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Why a segment's header is unusable, or nil if it is fine.
    static func headerProblem(_ bytes: UnsafeRawBufferPointer, id: UInt64) -> String? {
        guard bytes.count >= headerSize else { return "shorter (\(bytes.count) bytes) than its header" }
        guard bytes.prefix(4).elementsEqual(magic) else { return "does not start with the segment magic" }
        let version = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
        guard readableVersions.contains(version) else { return "has unsupported version \(version)" }
        let stored = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        guard stored == id else { return "holds segment id \(stored), not \(id)" }
        return nil
    }
}

/// What a scan found in one segment's bytes.
struct SegmentScan {
    /// Valid data records (not padding), in order.
    var records: [RecordFormat.Found] = []
    /// Padding records: corrupt regions an earlier recovery already counted and padded over.
    var paddingRecords = 0
    /// Corrupt regions followed by a valid record: start and length. A damaged tail is not one of them.
    var corruptRegions: [(offset: Int, length: Int)] = []
    /// Where the usable part of the file ends; bytes past it are a torn or corrupt tail.
    var validEnd: Int = SegmentFormat.headerSize
    /// Whether the tail past `validEnd` looked like a record cut short (as opposed to damage).
    var tailIsTorn = false

    /// Scans `bytes`, a whole segment file whose header is valid.
    init(_ bytes: UnsafeRawBufferPointer) {
        var position = SegmentFormat.headerSize
        validEnd = position
        while position < bytes.count {
            if let found = RecordFormat.record(in: bytes, at: position) {
                if found.isPadding { paddingRecords += 1 } else { records.append(found) }
                position += found.size
                validEnd = position
                continue
            }
            // Damage at `position`: resynchronise on the next marker that starts a valid record.
            guard let next = Self.nextRecord(in: bytes, after: position) else {
                tailIsTorn = RecordFormat.looksTorn(bytes, at: position)
                return
            }
            corruptRegions.append((position, next - position))
            position = next
        }
    }

    private static func nextRecord(in bytes: UnsafeRawBufferPointer, after position: Int) -> Int? {
        var candidate = position + 1
        let last = bytes.count - RecordFormat.headerSize
        while candidate <= last {
            if bytes[candidate] == RecordFormat.marker[0],
               bytes.loadUnaligned(fromByteOffset: candidate, as: UInt32.self) == RecordFormat.markerWord.littleEndian,
               RecordFormat.record(in: bytes, at: candidate) != nil {
                return candidate
            }
            candidate += 1
        }
        return nil
    }
}
