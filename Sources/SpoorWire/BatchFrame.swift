import SpoorModel

/// How a frame's payload is compressed.
public enum Codec: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Stored as is.
    case none = 0
    /// gzip (RFC 1952, deflate through zlib); `gzip -d` reads it.
    case gzip = 1
    /// Zstandard (RFC 8878, through libzstd); `zstd -d` reads it.
    case zstd = 2

    /// The codec's name: `none`, `gzip` or `zstd`.
    public var description: String {
        switch self {
        case .none: "none"
        case .gzip: "gzip"
        case .zstd: "zstd"
        }
    }

    /// The codec with the given name, or nil.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }

    /// Whether this build can write and read the codec: zstd needs the `SystemLibraries` trait (libzstd), which
    /// Apple platforms do not have; `none` and gzip (zlib, in every SDK) are always there.
    public var isAvailable: Bool {
        #if SPOOR_SYSTEM_LIBRARIES
        true
        #else
        self != .zstd
        #endif
    }

    /// The codec trackers use unless configured otherwise: zstd where it is available, gzip elsewhere (every Apple
    /// platform). For realistic 50-event frames the two are within 3 % of each other (docs/wire-paths.md).
    public static var preferred: Codec { zstd.isAvailable ? .zstd : .gzip }

    /// The compression level used unless another is asked for: zlib 6, zstd 3.
    public var defaultLevel: Int {
        switch self {
        case .none: 0
        case .gzip: 6
        case .zstd: 3
        }
    }
}

/// A 128-bit batch id, random, stable across retries and restarts.
public struct BatchID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The id's 16 bytes, in wire order.
    public var bytes: (UInt64, UInt64)

    /// Creates an id from its high and low 64 bits (wire order: high first, each big-endian).
    public init(high: UInt64, low: UInt64) {
        bytes = (high, low)
    }

    /// Creates a random id (version 4 UUID layout).
    public static func random() -> BatchID {
        var generator = SystemRandomNumberGenerator()
        let high = (generator.next() & ~0xF000) | 0x4000
        let low = (generator.next() & ~(UInt64(0xC) << 60)) | (UInt64(0x8) << 60)
        return BatchID(high: high, low: low)
    }

    /// Parses 32 hexadecimal digits (dashes allowed, as in a UUID).
    public init?(hex text: String) {
        let digits = text.filter { $0 != "-" }
        guard digits.count == 32, let high = UInt64(digits.prefix(16), radix: 16), let low = UInt64(digits.suffix(16), radix: 16) else {
            return nil
        }
        self.init(high: high, low: low)
    }

    /// The 16 bytes in wire order.
    public var wireBytes: [UInt8] {
        var out: [UInt8] = []
        withUnsafeBytes(of: bytes.0.bigEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: bytes.1.bigEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// 32 lowercase hexadecimal digits.
    public var description: String { hex(bytes.0, digits: 16) + hex(bytes.1, digits: 16) }

    public static func == (a: Self, b: Self) -> Bool { a.bytes == b.bytes }
    public static func < (a: Self, b: Self) -> Bool { a.bytes < b.bytes }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
    }
}

/// The fixed header of a batch frame (see `docs/frame-format.md`).
public struct FrameHeader: Sendable, Hashable {
    /// The frame format version (1).
    public var version: UInt8
    /// How the payload is compressed.
    public var codec: Codec
    /// The number of records (`Batch` entries) in the payload.
    public var recordCount: UInt32
    /// The payload's length before compression.
    public var uncompressedLength: UInt32
    /// The length of the payload as stored in the frame.
    public var storedLength: UInt32
    /// CRC-32C of the uncompressed payload.
    public var payloadCRC: UInt32
    /// The batch id.
    public var batchID: BatchID
    /// When the batch was sealed, in milliseconds since the epoch.
    public var sealedAt: Int64
}

/// A decoded frame: its header and the uncompressed payload, a protobuf `spoor.v1.Batch`.
public struct DecodedFrame: Sendable, Hashable {
    /// The frame header.
    public var header: FrameHeader
    /// The concatenated records: a valid protobuf `Batch`.
    public var payload: [UInt8]
}

/// Encoding of batch frames: a self-describing header, then the (compressed) records.
///
/// ```
/// offset size field
/// 0      4    magic 89 53 50 42 ("\x89SPB")
/// 4      1    version (1)
/// 5      1    codec: 0 none, 1 gzip, 2 zstd
/// 6      2    u16 LE header length (52)
/// 8      4    u32 LE record count
/// 12     4    u32 LE uncompressed payload length
/// 16     4    u32 LE stored payload length
/// 20     4    u32 LE CRC-32C of the uncompressed payload
/// 24     16   batch id
/// 40     8    i64 LE sealed-at time, milliseconds since the epoch
/// 48     4    u32 LE CRC-32C of bytes 0..<48
/// 52     n    payload
/// ```
public enum BatchFrame {
    /// The four bytes every frame starts with.
    public static let magic: [UInt8] = [0x89, 0x53, 0x50, 0x42]
    /// The format version this code writes.
    public static let version: UInt8 = 1
    /// The header length of version 1.
    public static let headerLength = 52
    /// The media type of a frame in an HTTP body.
    public static let mediaType = "application/x-spoor-batch"

    /// Whether `bytes` starts with the frame magic.
    public static func hasMagic(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: magic)
    }

    /// Encodes a frame around `payload`, a run of `Batch` entries, as it is.
    ///
    /// - Parameters:
    ///   - payload: the uncompressed payload, a run of `Batch.events` entries, after the `Batch.contexts` entries
    ///     they extend (a batch sealed from the log starts with its context record).
    ///   - recordCount: how many entries the payload holds.
    ///   - batchID: the batch's id, kept across retries.
    ///   - sealedAt: when the batch was sealed, milliseconds since the epoch.
    ///   - codec: how the payload is stored.
    ///   - level: the compression level; `nil` uses the codec's default.
    public static func encode(
        payload: [UInt8], recordCount: Int, batchID: BatchID, sealedAt: Int64, codec: Codec, level: Int? = nil
    ) throws(FrameError) -> [UInt8] {
        guard payload.count <= Int(UInt32.max), recordCount >= 0, recordCount <= Int(UInt32.max) else {
            throw FrameError(.tooLarge, field: "payload", reason: "payload of \(payload.count) bytes does not fit a frame")
        }
        let stored: [UInt8]
        switch codec {
        case .none: stored = payload
        case .gzip: stored = try Compression.gzip(payload, level: level ?? codec.defaultLevel)
        case .zstd: stored = try Compression.zstd(payload, level: level ?? codec.defaultLevel)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(headerLength + stored.count)
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { frame.append(contentsOf: $0) }
        }
        frame.append(contentsOf: magic)
        frame.append(version)
        frame.append(codec.rawValue)
        put(UInt16(headerLength))
        put(UInt32(recordCount))
        put(UInt32(payload.count))
        put(UInt32(stored.count))
        put(CRC32C.checksum(payload))
        frame.append(contentsOf: batchID.wireBytes)
        put(sealedAt)
        put(CRC32C.checksum(frame))
        frame.append(contentsOf: stored)
        return frame
    }
}

/// Limits that keep decoding of untrusted frames bounded.
public struct FrameLimits: Sendable, Hashable {
    /// The largest whole frame accepted (default 8 MiB).
    public var maxFrameBytes: Int
    /// The largest uncompressed payload accepted (default 8 MiB); decompression stops there.
    public var maxUncompressedBytes: Int
    /// The most records one frame may declare (default 10,000).
    public var maxRecords: Int

    /// Creates limits.
    public init(maxFrameBytes: Int = 8 << 20, maxUncompressedBytes: Int = 8 << 20, maxRecords: Int = 10_000) {
        self.maxFrameBytes = maxFrameBytes
        self.maxUncompressedBytes = maxUncompressedBytes
        self.maxRecords = maxRecords
    }
}

/// Why bytes are not an acceptable frame.
public struct FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of bad frame.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Fewer bytes than the header or the declared payload.
        case truncated
        /// The frame does not start with the magic.
        case badMagic
        /// A version this code does not read.
        case unsupportedVersion
        /// A codec byte outside none/gzip/zstd.
        case unknownCodec
        /// The header length field is wrong for the version.
        case badHeaderLength
        /// The header's checksum does not match.
        case headerChecksumMismatch
        /// Bytes after the declared payload.
        case trailingBytes
        /// A declared size or count is past a limit.
        case tooLarge
        /// The compressed payload is malformed.
        case decompressionFailed
        /// Decompression produced another length than declared.
        case lengthMismatch
        /// The payload's checksum does not match.
        case payloadChecksumMismatch
        /// The payload is not a run of `Batch` entries, or holds another count than declared.
        case malformedPayload
        /// Compression failed (out of memory).
        case compressionFailed
        /// A codec this build cannot write or read: zstd without the `SystemLibraries` trait (``Codec/isAvailable``).
        case codecUnavailable
    }

    /// What is wrong.
    public var kind: Kind
    /// The header field or part at fault, such as `codec` or `payload`.
    public var field: String
    /// A human-readable explanation.
    public var reason: String

    /// Creates a frame error.
    public init(_ kind: Kind, field: String, reason: String) {
        self.kind = kind
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(kind.rawValue) (\(field)): \(reason)" }

    /// Where the bytes at fault start in the frame, for messages that point at them: a header field's offset in
    /// the layout ``BatchFrame`` shows, or ``BatchFrame/headerLength`` (the payload's start) for `payload` and
    /// `payload_crc`. `nil` when ``field`` names no one place, such as `header` for a frame cut short.
    ///
    /// ```swift
    /// do { _ = try FrameDecoder().decode(body) } catch {
    ///     print("\(error.field)\(error.offset.map { " at byte \($0)" } ?? ""): \(error.reason)")
    /// }
    /// ```
    public var offset: Int? {
        switch field {
        case "magic": 0
        case "version": 4
        case "codec": 5
        case "header_length": 6
        case "record_count": 8
        case "uncompressed_length": 12
        case "header_crc": 48
        case "payload", "payload_crc": BatchFrame.headerLength
        default: nil
        }
    }
}

/// Decodes frames from untrusted bytes: bounded, typed errors, never a crash.
public struct FrameDecoder: Sendable {
    /// The limits enforced.
    public var limits: FrameLimits

    /// Creates a decoder.
    public init(limits: FrameLimits = FrameLimits()) {
        self.limits = limits
    }

    /// Checks and decodes the header, and checks that the frame has exactly the declared payload length.
    public func decodeHeader(_ bytes: [UInt8]) throws(FrameError) -> FrameHeader {
        guard bytes.count >= 8 else {
            throw FrameError(.truncated, field: "header", reason: "\(bytes.count) bytes is shorter than a frame header")
        }
        guard BatchFrame.hasMagic(bytes) else { throw FrameError(.badMagic, field: "magic", reason: "not a Spoor batch frame") }
        guard bytes[4] == BatchFrame.version else {
            throw FrameError(.unsupportedVersion, field: "version", reason: "version \(bytes[4]) is not supported")
        }
        guard let codec = Codec(rawValue: bytes[5]) else {
            throw FrameError(.unknownCodec, field: "codec", reason: "codec \(bytes[5]) is unknown")
        }
        let headerLength = Int(bytes[6]) | Int(bytes[7]) << 8
        guard headerLength == BatchFrame.headerLength else {
            throw FrameError(.badHeaderLength, field: "header_length", reason: "header length \(headerLength), expected \(BatchFrame.headerLength)")
        }
        guard bytes.count >= headerLength else {
            throw FrameError(.truncated, field: "header", reason: "\(bytes.count) bytes is shorter than the \(headerLength)-byte header")
        }
        guard bytes.count <= limits.maxFrameBytes else {
            throw FrameError(.tooLarge, field: "frame", reason: "\(bytes.count) bytes is past the \(limits.maxFrameBytes)-byte limit")
        }
        return try bytes.withBytes { raw throws(FrameError) in
            func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
            func u64(_ at: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            guard u32(48) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<48])) else {
                throw FrameError(.headerChecksumMismatch, field: "header_crc", reason: "the header checksum does not match")
            }
            let header = FrameHeader(
                version: bytes[4], codec: codec, recordCount: u32(8), uncompressedLength: u32(12), storedLength: u32(16),
                payloadCRC: u32(20), batchID: BatchID(high: u64(24), low: u64(32)),
                sealedAt: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 40, as: Int64.self))
            )
            guard Int(header.recordCount) <= limits.maxRecords else {
                throw FrameError(.tooLarge, field: "record_count", reason: "\(header.recordCount) records is past the limit of \(limits.maxRecords)")
            }
            guard Int(header.uncompressedLength) <= limits.maxUncompressedBytes else {
                throw FrameError(.tooLarge, field: "uncompressed_length",
                                 reason: "\(header.uncompressedLength) bytes is past the \(limits.maxUncompressedBytes)-byte limit")
            }
            let available = raw.count - headerLength
            guard Int(header.storedLength) <= available else {
                throw FrameError(.truncated, field: "payload", reason: "\(available) payload bytes, \(header.storedLength) declared")
            }
            guard Int(header.storedLength) == available else {
                throw FrameError(.trailingBytes, field: "payload", reason: "\(available - Int(header.storedLength)) bytes after the payload")
            }
            if codec == .none && header.storedLength != header.uncompressedLength {
                throw FrameError(.lengthMismatch, field: "uncompressed_length", reason: "an uncompressed payload must have equal lengths")
            }
            return header
        }
    }

    /// Decodes a whole frame: header, bounded decompression, checksum and record count.
    public func decode(_ bytes: [UInt8]) throws(FrameError) -> DecodedFrame {
        let header = try decodeHeader(bytes)
        let expected = Int(header.uncompressedLength)
        let payload: [UInt8]
        switch header.codec {
        case .none: payload = Array(bytes[BatchFrame.headerLength...])
        case .gzip: payload = try bytes.withBytes { raw throws(FrameError) in
            try Compression.gunzip(UnsafeRawBufferPointer(rebasing: raw[BatchFrame.headerLength...]), expectedLength: expected)
        }
        case .zstd: payload = try bytes.withBytes { raw throws(FrameError) in
            try Compression.unzstd(UnsafeRawBufferPointer(rebasing: raw[BatchFrame.headerLength...]), expectedLength: expected)
        }
        }
        guard CRC32C.checksum(payload) == header.payloadCRC else {
            throw FrameError(.payloadChecksumMismatch, field: "payload_crc", reason: "the payload checksum does not match")
        }
        let count = try BatchPayload.eventCount(payload)
        guard count == Int(header.recordCount) else {
            throw FrameError(.malformedPayload, field: "record_count", reason: "the payload holds \(count) records, \(header.recordCount) declared")
        }
        return DecodedFrame(header: header, payload: payload)
    }
}
