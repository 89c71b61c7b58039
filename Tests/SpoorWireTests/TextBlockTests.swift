import SpoorWire
import Testing

@Suite struct TextBlockTests {
    /// The plain count the sixteen-at-a-time one must agree with.
    static func naiveZeros(_ bytes: [UInt8]) -> Int { bytes.filter { $0 == 0 }.count }

    @Test func zeroCountMatchesAByteByByteCountForEveryByteValueAndPosition() {
        // Every byte value at every position of a block and of the tail after it, next to zeros and to 0x80/0xFF,
        // where a carry or a borrow between bytes would show.
        for value in 0...255 {
            for position in 0..<19 {
                for filler: UInt8 in [0x00, 0x01, 0x80, 0xFF] {
                    var bytes = [UInt8](repeating: filler, count: 19)
                    bytes[position] = UInt8(value)
                    let counted = bytes.withUnsafeBytes { TextBlock.zeroBytes(in: $0) }
                    #expect(counted == Self.naiveZeros(bytes), "value \(value) at \(position) among \(filler)")
                }
            }
        }
    }

    @Test func zeroCountHandlesEveryLengthAndOffset() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D // a fixed xorshift seed: the same bytes every run
        var bytes: [UInt8] = []
        for _ in 0..<300 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            bytes.append(state % 5 == 0 ? 0 : UInt8(truncatingIfNeeded: state >> 8))
        }
        for start in 0..<9 {
            for end in stride(from: start, through: bytes.count, by: 7) {
                let slice = Array(bytes[start..<end])
                #expect(slice.withUnsafeBytes { TextBlock.zeroBytes(in: $0) } == Self.naiveZeros(slice))
            }
        }
    }

    @Test func appendedStringsAreNULTerminatedAtTheirOffsetsAcrossGrowth() {
        var block = TextBlock()
        defer { block.deallocate() }
        block.reset()
        var expected: [(UInt32, String)] = []
        for index in 0..<200 {
            let string = String(repeating: "é", count: index % 40) + "#\(index)"
            guard let offset = block.append(string) else {
                Issue.record("append failed")
                return
            }
            expected.append((offset, string))
        }
        #expect(block.base![0] == 0)
        #expect(!block.hasEmbeddedNUL)
        for (offset, string) in expected {
            let stored = String(cString: block.base! + Int(offset))
            #expect(stored == string)
        }

        _ = block.append("a\u{0}b")
        #expect(block.hasEmbeddedNUL)
        block.reset()
        #expect(block.count == 1)
        #expect(!block.hasEmbeddedNUL)
    }
}
