import SpoorModel
import Testing
import SpoorWire


@Suite struct CRC32CTests {
    /// A bit-at-a-time reference, the definition of the checksum.
    static func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    @Test func checkValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func knownVectors() {
        // RFC 3720 (iSCSI) appendix B.4 test patterns.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    }

    @Test func matchesReferenceAtEveryLengthAndAlignment() {
        var generator = SplitMix64(seed: 7)
        let data = (0..<300).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        for start in 0..<9 {
            for end in stride(from: start, through: data.count, by: 7) {
                let slice = Array(data[start..<end])
                #expect(CRC32C.checksum(slice) == Self.reference(slice))
            }
        }
    }

    @Test func updateIsIncremental() {
        let data = Array("The quick brown fox jumps over the lazy dog".utf8)
        for split in 0...data.count {
            let first = data[..<split].withUnsafeBytes { CRC32C.update(0, $0) }
            let whole = data[split...].withUnsafeBytes { CRC32C.update(first, $0) }
            #expect(whole == CRC32C.checksum(data))
        }
    }

    @Test func hardwareAndTablesAgreeOnRandomInputs() throws {
        #if arch(x86_64)
        // Every x86_64 CPU made since 2008 has SSE4.2: the fast path must be the one in use.
        #expect(CRC32C.usesHardware)
        #endif
        var generator = SplitMix64(seed: 0xC2C)
        for round in 0..<1000 {
            let count = round < 300 ? round : Int(generator.next() % 5000)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let seed = UInt32(truncatingIfNeeded: generator.next())
            let offset = Int(generator.next() % 8)
            let padded = [UInt8](repeating: 0xA5, count: offset) + bytes
            try padded.withUnsafeBytes { raw in
                let slice = UnsafeRawBufferPointer(rebasing: raw[offset...])
                let portable = CRC32C.portableUpdate(seed, slice)
                #expect(CRC32C.update(seed, slice) == portable)
                if let hardware = CRC32C.hardwareUpdate(seed, slice) {
                    #expect(hardware == portable, "length \(count), offset \(offset)")
                } else {
                    try #require(!CRC32C.usesHardware)
                }
            }
            if round < 300 { #expect(CRC32C.checksum(bytes) == Self.reference(bytes)) }
        }
    }

    @Test func bothPathsGiveTheCheckValue() {
        let check = Array("123456789".utf8)
        check.withUnsafeBytes { raw in
            #expect(CRC32C.portableUpdate(0, raw) == 0xE306_9283)
            if let hardware = CRC32C.hardwareUpdate(0, raw) { #expect(hardware == 0xE306_9283) }
        }
    }
}
