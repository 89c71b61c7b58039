internal import CSpoorCRC

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
///
/// This is the checksum of iSCSI, ext4 and many storage formats; the check value
/// of the ASCII bytes `123456789` is `0xE3069283`. Computed by the CPU's CRC-32C
/// instructions where it has them (SSE4.2 on x86_64, the CRC extension on arm64),
/// else by slicing-by-8 tables; both are in the `CSpoorCRC` target and give equal results.
public enum CRC32C {
    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }

    /// Extends `crc`, the checksum of some bytes, with the bytes that follow them.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return spoor_crc32c_update(crc, base, bytes.count)
    }

    /// Whether this CPU's CRC-32C instructions are used.
    public static var usesHardware: Bool { spoor_crc32c_hardware() != 0 }

    /// ``update(_:_:)`` through the tables only, for tests and benchmarks.
    package static func portableUpdate(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return spoor_crc32c_update_portable(crc, base, bytes.count)
    }

    /// ``update(_:_:)`` through the instructions only; `nil` when the CPU has none.
    package static func hardwareUpdate(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32? {
        guard usesHardware else { return nil }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return spoor_crc32c_update_hardware(crc, base, bytes.count)
    }
}
