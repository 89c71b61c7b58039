import SpoorWire

/// Builds frames with any header values, for tests of the decoder's checks.
public func forgeFrame(
    codec: UInt8, stored: [UInt8], uncompressedLength: Int, recordCount: Int, payloadCRC: UInt32,
    version: UInt8 = 1, headerLength: UInt16 = 52, sealedAt: Int64 = 1_700_000_000_000
) -> [UInt8] {
    var frame = BatchFrame.magic + [version, codec]
    func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { frame.append(contentsOf: $0) } }
    put(headerLength)
    put(UInt32(recordCount))
    put(UInt32(uncompressedLength))
    put(UInt32(stored.count))
    put(payloadCRC)
    frame.append(contentsOf: BatchID(high: 1, low: 2).wireBytes)
    put(sealedAt)
    put(CRC32C.checksum(frame))
    return frame + stored
}
