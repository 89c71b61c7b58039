/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), computed by slicing-by-8.
///
/// This is the checksum of iSCSI, ext4 and many storage formats; the check value
/// of the ASCII bytes `123456789` is `0xE3069283`.
public enum CRC32C {
    /// Eight 256-entry tables: table k gives the CRC of a byte followed by k zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for k in 1..<8 {
                crc = (crc >> 8) ^ tables[Int(crc & 0xFF)]
                tables[k * 256 + byte] = crc
            }
        }
        return tables
    }()

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
        guard var p = bytes.baseAddress, !bytes.isEmpty else { return crc }
        var remaining = bytes.count
        var crc = ~crc
        tables.withUnsafeBufferPointer { t in
            let t = t.baseAddress!
            while remaining >= 8 {
                let low = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) ^ crc
                let high = UInt32(littleEndian: (p + 4).loadUnaligned(as: UInt32.self))
                let a = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                let b = t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                let c = t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                let d = t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                crc = a ^ b ^ c ^ d
                p += 8
                remaining -= 8
            }
            while remaining > 0 {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1
                remaining -= 1
            }
        }
        return ~crc
    }
}
