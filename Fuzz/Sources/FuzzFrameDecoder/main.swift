// Fuzzes FrameDecoder with arbitrary bytes, as a collector receives them. Bad input must only
// ever throw a FrameError; a frame that decodes must encode again (in its codec and as `none`)
// to a frame that decodes to the same payload. Any crash, trap or sanitizer report is a bug.
import CFuzzDriver
import Foundation
import SpoorSerializer
import SpoorTransport

// Small limits keep each run fast; the checks do not depend on their values.
let decoder = FrameDecoder(limits: FrameLimits(maxFrameBytes: 1 << 20, maxUncompressedBytes: 1 << 20, maxRecords: 1000))
nonisolated(unsafe) let events = EventDecoder()

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : []
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
                sealedAt: header.sealedAt, codec: codec
            )
            let decoded = try decoder.decode(again)
            if decoded.payload != frame.payload || decoded.header.batchID != header.batchID {
                fatalError("re-encoding as \(codec) changed the frame")
            }
            if codec == .none && header.codec == .none && again != bytes {
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
