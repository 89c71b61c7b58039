public import SpoorModel
public import SpoorWire

/// How one record is framed in a segment file.
///
/// ```
/// offset  size  field
/// 0       4     sync marker F1 5E C0 DA
/// 4       4     u32 LE: payload length (bits 0-30); bit 31 set = padding, not a record
/// 8       4     u32 LE: CRC-32C of bytes 4..<8 followed by the payload
/// 12      n     payload: one protobuf `Batch` entry: an event (tag 0x0A, varint length, `Event` bytes)
///               or a context (tag 0x12, varint length, `Event` bytes holding shared fields only)
/// ```
///
/// Context records: an event record whose `context` field is set extends the last context record before
/// it in the same segment (`proto/spoor/v1/event.proto`, `Batch`). The log restates the context in effect
/// at the top of every segment that needs it, so a segment is never read without the contexts its
/// events extend, and a context record is never counted as a record.
///
/// The marker lets recovery find the next record after damage; the checksum
/// covers the length so a damaged length is caught too. Padding records are
/// written over corrupt regions at recovery so the region is counted once and
/// later scans pass over it.
package enum RecordFormat {
    package static let marker: [UInt8] = [0xF1, 0x5E, 0xC0, 0xDA]
    static let markerWord: UInt32 = 0xDAC0_5EF1  // the marker read as a little-endian u32
    package static let headerSize = 12
    static let paddingFlag: UInt32 = 1 << 31
    /// The largest payload a record may carry; larger lengths are treated as damage.
    static let maxPayload = 16 << 20

    /// Writes a record header for `payload` into `buffer` at `at` (12 bytes already reserved).
    package static func writeHeader(into buffer: UnsafeMutableRawBufferPointer, at: Int, payloadLength: Int, padding: Bool = false) {
        let lengthField = UInt32(payloadLength) | (padding ? paddingFlag : 0)
        let base = buffer.baseAddress! + at
        base.storeBytes(of: markerWord.littleEndian, as: UInt32.self)
        (base + 4).storeBytes(of: lengthField.littleEndian, toByteOffset: 0, as: UInt32.self)
        var crc = CRC32C.update(0, UnsafeRawBufferPointer(start: base + 4, count: 4))
        crc = CRC32C.update(crc, UnsafeRawBufferPointer(start: base + headerSize, count: payloadLength))
        (base + 8).storeBytes(of: crc.littleEndian, as: UInt32.self)
    }

    /// A record found in a buffer: where it starts, its total size, and whether it is padding.
    package struct Found {
        package var offset: Int
        package var size: Int
        var isPadding: Bool

        /// Its payload, copied out of `bytes`, the buffer it was found in.
        package func payload(in bytes: [UInt8]) -> [UInt8] {
            Array(bytes[(offset + RecordFormat.headerSize)..<(offset + size)])
        }
    }

    /// The valid record starting at `offset` in `bytes`, if there is one.
    package static func record(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Found? {
        guard offset >= 0, bytes.count - offset >= headerSize else { return nil }
        let base = bytes.baseAddress! + offset
        guard UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)) == markerWord else { return nil }
        let lengthField = UInt32(littleEndian: (base + 4).loadUnaligned(as: UInt32.self))
        let length = Int(lengthField & ~paddingFlag)
        let isPadding = lengthField & paddingFlag != 0
        guard isPadding || length <= maxPayload, length <= bytes.count - offset - headerSize else { return nil }
        var crc = CRC32C.update(0, UnsafeRawBufferPointer(start: base + 4, count: 4))
        crc = CRC32C.update(crc, UnsafeRawBufferPointer(start: base + headerSize, count: length))
        guard crc == UInt32(littleEndian: (base + 8).loadUnaligned(as: UInt32.self)) else { return nil }
        if !isPadding && !isBatchEntry(UnsafeRawBufferPointer(start: base + headerSize, count: length), orContext: true) {
            return nil
        }
        return Found(offset: offset, size: headerSize + length, isPadding: isPadding)
    }

    /// Whether `payload` is exactly one protobuf `Batch.events` entry (or, with `orContext`, one
    /// `Batch.contexts` entry): the tag, a varint length, that many bytes (the rule of SpoorWire's `BatchPayload`).
    ///
    /// Checked on every record read, so a record that passes its CRC but holds anything
    /// else (only a deliberately forged one can) never reaches a batch.
    static func isBatchEntry(_ payload: UnsafeRawBufferPointer, orContext: Bool = false) -> Bool {
        switch BatchPayload.kind(ofRecord: payload) {
        case .event?: true
        case .context?: orContext
        case nil: false
        }
    }

    /// Whether the framed record at `offset` in `bytes` (already checked) is a context record.
    package static func isContext<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at offset: Int) -> Bool where Bytes.Index == Int {
        BatchPayload.Kind(tag: bytes[offset + headerSize]) == .context
    }

    /// A protobuf `Batch` that decodes as the one event `payload` (a `Batch.events` entry) made whole: the
    /// entry of the context in effect for it first, when there is one.
    static func wholeEvent(_ payload: [UInt8], context: [UInt8]?) -> [UInt8] {
        guard let context else { return payload }
        return context + payload
    }

    /// `payload` framed as one record.
    package static func frame(_ payload: [UInt8]) -> [UInt8] {
        var framed = [UInt8](repeating: 0, count: headerSize)
        framed.append(contentsOf: payload)
        framed.withUnsafeMutableBytes { writeHeader(into: $0, at: 0, payloadLength: payload.count) }
        return framed
    }

    /// Whether the bytes from `offset` to the end look like a record cut short:
    /// a prefix of a header, a header whose length runs past the end, or zeros.
    static func looksTorn(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        if rest.allSatisfy({ $0 == 0 }) { return true }
        if rest.count < 4 { return zip(rest, marker).allSatisfy { $0 == $1 } }
        guard UInt32(littleEndian: rest.loadUnaligned(as: UInt32.self)) == markerWord else { return false }
        if rest.count < 8 { return true }
        let length = Int(UInt32(littleEndian: rest.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) & ~paddingFlag)
        return length <= maxPayload && headerSize + length > rest.count
    }
}

/// Encoded records waiting to be appended to an ``EventLog`` as one write group.
///
/// Each record is framed (length, CRC-32C, sync marker) as it is added, so the
/// work of encoding and checksumming happens on the caller's thread and the log
/// only has to write the bytes. A record's payload is one protobuf `Batch`
/// entry, so any run of payloads is a valid `spoor.v1.Batch`.
public struct RecordBuffer: Sendable {
    /// The framed records, back to back.
    package var bytes: [UInt8] = []
    /// The framed size of each record, in order, context records included.
    var sizes: [UInt32] = []
    /// How many of the records are context records.
    private(set) var contextCount = 0
    /// The payload of the last context record, if any.
    private(set) var lastContext: [UInt8]?
    /// Records left out because they are larger than a record may be (16 MiB) or, from
    /// ``append(entry:)``, not one `Batch` entry; the log counts them as dropped.
    public private(set) var rejected = 0

    /// Creates an empty buffer.
    public init() {}

    /// Encodes `event` as a `Batch` entry and adds it as one record.
    ///
    /// On error the buffer is left as it was. A record larger than 16 MiB is left out
    /// and counted in ``rejected``.
    public mutating func append(_ event: Event, using encoder: EventEncoder) throws(EncodeError) {
        try appendRecord { bytes throws(EncodeError) in try encoder.appendBatchEntry(event, to: &bytes) }
    }

    /// Encodes `event` followed by `suffix` (more encoded fields of the same event, such as `properties`
    /// entries encoded once for many events) as one `Batch` entry, written in place, and adds it as one record.
    ///
    /// See `EventEncoder.appendBatchEntry(_:suffix:to:)`. On error the buffer is left as it was; a record
    /// larger than 16 MiB is left out and counted in ``rejected``.
    public mutating func append(_ event: Event, suffix: [UInt8], using encoder: EventEncoder) throws(EncodeError) {
        try appendRecord { bytes throws(EncodeError) in try encoder.appendBatchEntry(event, suffix: suffix, to: &bytes) }
    }

    /// Adds a context record: `context` and `suffix` encoded as one `Batch.contexts` entry
    /// (`EventEncoder.appendContextEntry(_:suffix:to:)`).
    ///
    /// Event records added after it whose `context` field is set extend it, until the next context record
    /// (see `Batch` in `proto/spoor/v1/event.proto`); the log keeps it with them wherever they go: a new
    /// segment, memory while the disk fails, a sealed batch, a reader. On error the buffer is left as it was.
    package mutating func appendContext(_ context: Event, suffix: [UInt8], using encoder: EventEncoder) throws(EncodeError) {
        let start = bytes.count
        guard try appendRecord({ bytes throws(EncodeError) in try encoder.appendContextEntry(context, suffix: suffix, to: &bytes) })
        else { return }
        contextCount += 1
        lastContext = Array(bytes[(start + RecordFormat.headerSize)...])
    }

    /// Reserves a record header, lets `encode` append the payload behind it and frames the record; on error
    /// removes what was added. Returns whether the record was kept (see `finishRecord(start:)`).
    @discardableResult
    private mutating func appendRecord(_ encode: (inout [UInt8]) throws(EncodeError) -> Void) throws(EncodeError) -> Bool {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: RecordFormat.headerSize))
        do {
            try encode(&bytes)
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
        return finishRecord(start: start)
    }

    /// Adds one record whose payload is `entry`, which should be one protobuf `Batch` entry
    /// (tag `0x0A`, varint length, the `Event` bytes).
    ///
    /// Anything else is left out and counted in ``rejected``.
    public mutating func append(entry: some Collection<UInt8>) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: RecordFormat.headerSize))
        bytes.append(contentsOf: entry)
        let valid = bytes.withUnsafeBytes { RecordFormat.isBatchEntry(UnsafeRawBufferPointer(rebasing: $0[(start + RecordFormat.headerSize)...])) }
        guard valid else {
            bytes.removeSubrange(start...)
            rejected += 1
            return
        }
        finishRecord(start: start)
    }

    @discardableResult
    private mutating func finishRecord(start: Int) -> Bool {
        let length = bytes.count - start - RecordFormat.headerSize
        guard length <= RecordFormat.maxPayload else {
            // `append` cannot fail (the tracker's writer has nowhere to send an error): counted instead,
            // and the log adds them to `dropped`.
            bytes.removeSubrange(start...)
            rejected += 1
            return false
        }
        bytes.withUnsafeMutableBytes { raw in
            RecordFormat.writeHeader(into: raw, at: start, payloadLength: length)
        }
        sizes.append(UInt32(RecordFormat.headerSize + length))
        return true
    }

    /// The number of event records in the buffer (context records are not counted).
    public var count: Int { sizes.count - contextCount }

    /// Whether the buffer holds no record, event or context.
    public var isEmpty: Bool { sizes.isEmpty }

    /// The size of the framed records in bytes, as they will be written.
    public var byteCount: Int { bytes.count }

    /// Removes every record.
    public mutating func removeAll(keepingCapacity: Bool) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
        sizes.removeAll(keepingCapacity: keepingCapacity)
        rejected = 0
        contextCount = 0
        lastContext = nil
    }
}
