// Fuzzes FrameDecoder with arbitrary bytes, as a collector receives them (or, for inputs that start
// with 0xFF, with a header made to fit; see `frame(fromFuzzInput:)`). Bad input must only
// ever throw a FrameError; a frame that decodes must encode again (in its codec and as `none`)
// to a frame that decodes to the same payload. Any crash, trap or sanitizer report is a bug.
import CFuzzDriver
import Foundation
import SpoorWire
import SpoorLog

// Small limits keep each run fast; the checks do not depend on their values.
let decoder = FrameDecoder(limits: FrameLimits(maxFrameBytes: 1 << 20, maxUncompressedBytes: 1 << 20, maxRecords: 1000))
nonisolated(unsafe) let events = EventDecoder()

/// Inputs starting with 0xFF get a header made for them, so the fuzzer reaches decompression with
/// any codec, declared length and count despite the header checksum:
/// 0xFF, codec, u32 LE declared length, u16 LE record count, then the stored payload.
/// The payload checksum is right for `none` payloads and zero otherwise. Other inputs are frames as they are.
func frame(fromFuzzInput input: [UInt8]) -> [UInt8] {
    guard input.first == 0xFF, input.count >= 8 else { return input }
    let stored = Array(input[8...])
    let codec = input[1] % 3
    let declared = UInt32(input[2]) | UInt32(input[3]) << 8 | UInt32(input[4]) << 16 | UInt32(input[5]) << 24
    var frame = BatchFrame.magic + [BatchFrame.version, codec]
    func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { frame.append(contentsOf: $0) } }
    put(UInt16(BatchFrame.headerLength))
    put(UInt32(input[6]) | UInt32(input[7]) << 8)
    put(codec == 0 ? UInt32(stored.count) : declared % (1 << 21))
    put(UInt32(stored.count))
    put(codec == 0 ? CRC32C.checksum(stored) : 0)
    frame.append(contentsOf: BatchID(high: 1, low: 2).wireBytes)
    put(Int64(0))
    put(CRC32C.checksum(frame))
    return frame + stored
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = frame(fromFuzzInput: size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    let frame: DecodedFrame
    do {
        frame = try decoder.decode(bytes)
    } catch {
        return 0
    }
    let header = frame.header
    guard frame.payload.count == Int(header.uncompressedLength) else {
        fatalError("payload of \(frame.payload.count) bytes, \(header.uncompressedLength) declared")
    }
    for codec in Set([header.codec, .none]) {
        do {
            let again = try BatchFrame.encode(
                payload: frame.payload, recordCount: Int(header.recordCount), batchID: header.batchID,
                sealedAt: header.sealedAt, codec: codec  // the frame layer alone, byte for byte
            )
            let decoded = try decoder.decode(again)
            if decoded.payload != frame.payload || decoded.header.batchID != header.batchID {
                fatalError("re-encoding as \(codec) changed the frame")
            }
            if codec == .none && header.codec == .none && again != bytes && bytes.first != 0xFF {
                fatalError("an uncompressed frame did not re-encode byte for byte")
            }
        } catch {
            fatalError("a decoded frame does not encode and decode again as \(codec): \(error)")
        }
    }
    // The events themselves go through EventDecoder's own checks; any outcome but a crash is fine.
    _ = frame.payload.withUnsafeBytes { raw in try? events.decodeBatch(raw) }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
