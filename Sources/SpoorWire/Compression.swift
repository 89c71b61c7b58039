internal import CZlib
#if SPOOR_SYSTEM_LIBRARIES
internal import CZstd
#endif

/// One-shot compression and bounded decompression with zlib (gzip format) and, with the `SystemLibraries` trait,
/// libzstd. Without it (every Apple platform) a zstd frame can be neither written nor read: ``Codec/isAvailable``.
package enum Compression {
    // MARK: gzip

    package static func gzip(_ input: [UInt8], level: Int) throws(FrameError) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip wrapper, so a stock `gzip -d` reads the payload.
        guard deflateInit2_(&stream, Int32(level), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw FrameError(.compressionFailed, field: "payload", reason: "zlib could not start (level \(level))")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, UInt(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let (status, produced): (Int32, Int) = input.withUnsafeBytes { src in
            output.withUnsafeMutableBytes { dst in
                stream.next_in = UnsafeMutablePointer(mutating: src.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(src.count)
                stream.next_out = dst.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(dst.count)
                let status = deflate(&stream, Z_FINISH)
                return (status, Int(stream.total_out))
            }
        }
        guard status == Z_STREAM_END else {
            throw FrameError(.compressionFailed, field: "payload", reason: "zlib deflate returned \(status)")
        }
        output.removeSubrange(produced...)
        return output
    }

    /// Inflates a gzip stream that must produce exactly `expectedLength` bytes; stops as soon as it would produce more.
    static func gunzip(_ input: UnsafeRawBufferPointer, expectedLength: Int) throws(FrameError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw FrameError(.decompressionFailed, field: "payload", reason: "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        // One spare byte tells "exactly the declared length" from "more than declared". The buffer is not zeroed:
        // its pages take memory only as inflate writes them, so a stream that fails early costs what it produced,
        // not what it declared.
        var status: Int32 = Z_OK
        var leftover = 0
        let output = [UInt8](unsafeUninitializedCapacity: expectedLength + 1) { dst, initialized in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            stream.next_out = dst.baseAddress
            stream.avail_out = uInt(dst.count)
            status = inflate(&stream, Z_FINISH)
            leftover = Int(stream.avail_in)
            initialized = Int(stream.total_out)
        }
        let produced = output.count
        if produced > expectedLength {
            throw FrameError(.lengthMismatch, field: "uncompressed_length", reason: "the payload inflates past the declared \(expectedLength) bytes")
        }
        switch status {
        case Z_STREAM_END:
            guard leftover == 0 else {
                throw FrameError(.decompressionFailed, field: "payload", reason: "\(leftover) bytes after the gzip stream")
            }
            guard produced == expectedLength else {
                throw FrameError(.lengthMismatch, field: "uncompressed_length", reason: "the payload inflates to \(produced) bytes, \(expectedLength) declared")
            }
            return output
        case Z_BUF_ERROR, Z_OK:
            throw FrameError(.decompressionFailed, field: "payload", reason: "the gzip stream is cut off")
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw FrameError(.decompressionFailed, field: "payload", reason: "gzip: \(message)")
        }
    }

    // MARK: zstd

    #if SPOOR_SYSTEM_LIBRARIES
    package static func zstd(_ input: [UInt8], level: Int) throws(FrameError) -> [UInt8] {
        let bound = ZSTD_compressBound(input.count)
        var output = [UInt8](repeating: 0, count: max(bound, 1))
        let result = input.withUnsafeBytes { src in
            output.withUnsafeMutableBytes { dst in
                ZSTD_compress(dst.baseAddress, dst.count, src.baseAddress, src.count, Int32(level))
            }
        }
        guard ZSTD_isError(result) == 0 else {
            throw FrameError(.compressionFailed, field: "payload", reason: "zstd: \(String(cString: ZSTD_getErrorName(result)))")
        }
        output.removeSubrange(result...)
        return output
    }

    /// Decompresses zstd frames into exactly `expectedLength` bytes; output never grows past that.
    static func unzstd(_ input: UnsafeRawBufferPointer, expectedLength: Int) throws(FrameError) -> [UInt8] {
        guard !input.isEmpty else {
            throw FrameError(.decompressionFailed, field: "payload", reason: "the zstd payload is empty")
        }
        // The zstd frame's own header is checked before any allocation: it must be a zstd frame, and a content size
        // it states must be the declared length.
        let declared = ZSTD_getFrameContentSize(input.baseAddress, input.count)
        if declared == ZSTD_CONTENTSIZE_ERROR {
            throw FrameError(.decompressionFailed, field: "payload", reason: "zstd: the payload does not start with a zstd frame")
        }
        if declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != UInt64(expectedLength) {
            throw FrameError(.lengthMismatch, field: "uncompressed_length", reason: "the zstd frame declares \(declared) bytes, \(expectedLength) declared")
        }
        // Not zeroed: its pages take memory only as zstd writes them, so a payload that fails midway costs what it
        // produced. The destination is the window: one-shot decompression needs no buffer past it.
        var result = 0
        let output = [UInt8](unsafeUninitializedCapacity: expectedLength + 1) { dst, initialized in
            result = ZSTD_decompress(dst.baseAddress, expectedLength, input.baseAddress, input.count)
            initialized = ZSTD_isError(result) == 0 ? min(result, expectedLength) : 0
        }
        if ZSTD_isError(result) != 0 {
            let name = String(cString: ZSTD_getErrorName(result))
            if ZSTD_getErrorCode(result) == ZSTD_error_dstSize_tooSmall {
                throw FrameError(.lengthMismatch, field: "uncompressed_length", reason: "the payload decompresses past the declared \(expectedLength) bytes")
            }
            throw FrameError(.decompressionFailed, field: "payload", reason: "zstd: \(name)")
        }
        guard result == expectedLength else {
            throw FrameError(.lengthMismatch, field: "uncompressed_length", reason: "the payload decompresses to \(result) bytes, \(expectedLength) declared")
        }
        return output
    }
    #else
    package static func zstd(_ input: [UInt8], level: Int) throws(FrameError) -> [UInt8] {
        throw unavailable
    }

    static func unzstd(_ input: UnsafeRawBufferPointer, expectedLength: Int) throws(FrameError) -> [UInt8] {
        throw unavailable
    }

    private static var unavailable: FrameError {
        FrameError(.codecUnavailable, field: "codec", reason: "zstd is not in this build (it needs the SystemLibraries trait and libzstd)")
    }
    #endif
}
