import Foundation
import Testing
import SpoorTestSupport
import SpoorModel
import SpoorWire
import SpoorLog

@Suite struct BatchFrameTests {
    static func payload(_ range: Range<Int>) throws -> [UInt8] {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        for sequence in range { try encoder.appendBatchEntry(SequencedEvents.event(sequence), to: &payload) }
        return payload
    }

    @Test(arguments: Codec.linked)
    func roundTrip(codec: Codec) throws {
        let payload = try Self.payload(0..<100)
        let id = BatchID.random()
        let frame = try BatchFrame.encode(payload: payload, recordCount: 100, batchID: id, sealedAt: 1_700_000_000_123, codec: codec)
        #expect(BatchFrame.hasMagic(frame))
        let decoded = try FrameDecoder().decode(frame)
        // Plain events by default: the payload exactly as given.
        #expect(decoded.payload == payload)
        #expect(decoded.header.codec == codec)
        #expect(decoded.header.recordCount == 100)
        #expect(decoded.header.batchID == id)
        #expect(decoded.header.sealedAt == 1_700_000_000_123)
        #expect(decoded.header.uncompressedLength == UInt32(decoded.payload.count))
        #expect(try SequencedEvents.sequences(inBatch: decoded.payload) == Array(0..<100))
        if codec != .none { #expect(frame.count < payload.count / 2) }
    }

    @Test(arguments: Codec.linked)
    func emptyBatchRoundTrips(codec: Codec) throws {
        let frame = try BatchFrame.encode(payload: [], recordCount: 0, batchID: .random(), sealedAt: 0, codec: codec)
        let decoded = try FrameDecoder().decode(frame)
        #expect(decoded.payload.isEmpty && decoded.header.recordCount == 0)
    }

    @Test func batchIDsAreRandomAndPrintAsHex() {
        let a = BatchID.random(), b = BatchID.random()
        #expect(a != b)
        #expect(a.description.count == 32)
        #expect(BatchID(hex: a.description) == a)
        #expect(BatchID(hex: "00112233-4455-6677-8899-aabbccddeeff")?.wireBytes == (0..<16).map { UInt8($0 * 0x11) })
        #expect(BatchID(hex: "xyz") == nil)
    }

    @Test(arguments: Codec.linked)
    func everyTruncationIsATypedError(codec: Codec) throws {
        let frame = try BatchFrame.encode(payload: Self.payload(0..<5), recordCount: 5, batchID: .random(), sealedAt: 1, codec: codec)
        for length in 0..<frame.count {
            #expect(throws: FrameError.self) { try FrameDecoder().decode(Array(frame.prefix(length))) }
        }
        #expect(throws: FrameError.self) { try FrameDecoder().decode(frame + [0]) }
    }

    /// A flipped bit never yields different data: the decoder refuses the frame, or (in a compressed
    /// payload) the flip hit something that does not change the output, such as gzip's MTIME bytes,
    /// deflate's padding bits or an equivalent zstd table mode. Uncompressed frames catch every flip.
    @Test(arguments: Codec.linked)
    func everyFlippedByteIsCaughtOrHarmless(codec: Codec) throws {
        let payload = try Self.payload(0..<5)
        let frame = try BatchFrame.encode(payload: payload, recordCount: 5, batchID: .random(), sealedAt: 1, codec: codec)
        let header = try FrameDecoder().decode(frame).header
        let stored = payload
        var harmless = 0
        for index in frame.indices {
            var damaged = frame
            damaged[index] ^= 0x20
            guard let decoded = try? FrameDecoder().decode(damaged) else { continue }
            harmless += 1
            #expect(index >= BatchFrame.headerLength && codec != .none, "a flip of byte \(index) went unnoticed")
            #expect(decoded.payload == stored && decoded.header.batchID == header.batchID, "a flip of byte \(index) changed the data")
        }
        #expect(harmless <= 12)
    }

    @Test func headerErrorsNameTheirReason() throws {
        let good = try BatchFrame.encode(payload: Self.payload(0..<2), recordCount: 2, batchID: .random(), sealedAt: 1, codec: .none)
        func reason(_ bytes: [UInt8], limits: FrameLimits = FrameLimits()) -> FrameError.Kind? {
            do { _ = try FrameDecoder(limits: limits).decode(bytes); return nil } catch { return error.kind }
        }
        #expect(reason([]) == .truncated)
        #expect(reason(Array("not a frame at all".utf8)) == .badMagic)
        #expect(reason(forgeFrame(codec: 0, stored: [], uncompressedLength: 0, recordCount: 0, payloadCRC: 0, version: 2)) == .unsupportedVersion)
        #expect(reason(forgeFrame(codec: 9, stored: [], uncompressedLength: 0, recordCount: 0, payloadCRC: 0)) == .unknownCodec)
        #expect(reason(forgeFrame(codec: 0, stored: [], uncompressedLength: 0, recordCount: 0, payloadCRC: 0, headerLength: 60)) == .badHeaderLength)
        var badHeader = good
        badHeader[10] ^= 1
        #expect(reason(badHeader) == .headerChecksumMismatch)
        #expect(reason(good + [1, 2]) == .trailingBytes)
        #expect(reason(Array(good.dropLast())) == .truncated)
        #expect(reason(good, limits: FrameLimits(maxFrameBytes: 60)) == .tooLarge)
        #expect(reason(good, limits: FrameLimits(maxRecords: 1)) == .tooLarge)
        #expect(reason(good, limits: FrameLimits(maxUncompressedBytes: 10)) == .tooLarge)
        var badPayload = good
        badPayload[60] ^= 1
        #expect(reason(badPayload) == .payloadChecksumMismatch)
        let payload = try Self.payload(0..<2)
        #expect(reason(forgeFrame(codec: 0, stored: payload, uncompressedLength: payload.count, recordCount: 3, payloadCRC: CRC32C.checksum(payload))) == .malformedPayload)
        let junk: [UInt8] = [0x12, 0x01, 0x00]
        #expect(reason(forgeFrame(codec: 0, stored: junk, uncompressedLength: 3, recordCount: 1, payloadCRC: CRC32C.checksum(junk))) == .malformedPayload)
        // zstd junk: refused by libzstd where it is linked, and as a codec this build lacks elsewhere.
        #expect(reason(forgeFrame(codec: 2, stored: [1, 2, 3, 4], uncompressedLength: 10, recordCount: 1, payloadCRC: 0))
                == (Codec.zstd.isAvailable ? .decompressionFailed : .codecUnavailable))
        #expect(reason(forgeFrame(codec: 1, stored: [0x1F, 0x8B, 8, 0], uncompressedLength: 10, recordCount: 1, payloadCRC: 0)) == .decompressionFailed)
    }

    /// A payload that inflates far past its declared length is refused without producing more than declared.
    @Test(arguments: Codec.linkedCompressors)
    func decompressionBombsAreRefused(codec: Codec) throws {
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let compressed = codec == .gzip ? try Compression.gzip(zeros, level: 9) : try Compression.zstd(zeros, level: 3)
        #expect(compressed.count < 1 << 20)
        let frame = forgeFrame(codec: codec.rawValue, stored: compressed, uncompressedLength: 4096, recordCount: 1, payloadCRC: 0)
        do {
            _ = try FrameDecoder().decode(frame)
            Issue.record("a bomb was accepted")
        } catch {
            #expect(error.kind == .lengthMismatch)
        }
        // Declaring the true size runs into the configured limit before any work.
        let honest = forgeFrame(codec: codec.rawValue, stored: compressed, uncompressedLength: zeros.count, recordCount: 1, payloadCRC: 0)
        #expect(throws: FrameError(.tooLarge, field: "uncompressed_length", reason: "67108864 bytes is past the 8388608-byte limit")) {
            try FrameDecoder().decode(honest)
        }
    }

    @Test(arguments: Codec.linkedCompressors)
    func payloadShorterThanDeclaredIsRefused(codec: Codec) throws {
        let payload = try Self.payload(0..<3)
        let stored = codec == .gzip ? try Compression.gzip(payload, level: 6) : try Compression.zstd(payload, level: 3)
        let frame = forgeFrame(codec: codec.rawValue, stored: stored, uncompressedLength: payload.count + 1, recordCount: 3, payloadCRC: CRC32C.checksum(payload))
        #expect(throws: FrameError.self) { try FrameDecoder().decode(frame) }
    }
}
