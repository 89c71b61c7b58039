import SpoorModel
import Testing
@testable import SpoorWire

/// The Swift varint reader (log records, shared contexts, frames) and the C decoder (events) must accept exactly
/// the same varints and read the same values from them: both are fed the same bytes.
@Suite("Varint: the Swift reader agrees with the C decoder")
struct VarintAgreementTests {
    /// What the C decoder makes of `varint` as an event's `sequence` (field 5, wire type 0), appended to a valid
    /// event: the last value of a scalar field wins, so a decoded event carries exactly this varint's value.
    private func decodedByC(_ varint: [UInt8]) throws -> UInt64? {
        let bytes = try Fixtures.encode(Fixtures.event()) + [0x28] + varint
        return try? EventDecoder().decode(bytes).sequence
    }

    private func readBySwift(_ varint: [UInt8]) -> UInt64? {
        var index = varint.startIndex
        guard let value = Varint.read(varint, at: &index), index == varint.endIndex else { return nil }
        return value
    }

    private func expectAgreement(_ varint: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try decodedByC(varint) == readBySwift(varint), "\(varint)", sourceLocation: sourceLocation)
    }

    @Test func boundariesOfEveryLength() throws {
        for value in [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), UInt64(Int64.max), UInt64.max] as [UInt64] {
            var bytes: [UInt8] = []
            Varint.append(value, to: &bytes)
            #expect(readBySwift(bytes) == value)
            try expectAgreement(bytes)
        }
    }

    @Test func theTenthByteHoldsOneBitOnly() throws {
        let nine = [UInt8](repeating: 0xFF, count: 9)
        for last in [0x00, 0x01, 0x02, 0x03, 0x7F] as [UInt8] {
            try expectAgreement(nine + [last])
        }
        #expect(readBySwift(nine + [0x01]) == UInt64.max)
        #expect(readBySwift(nine + [0x02]) == nil)
        #expect(try decodedByC(nine + [0x02]) == nil)
    }

    @Test func tooLongAndPaddedForms() throws {
        // Eleven bytes, and zero padding up to ten bytes (legal: protobuf allows non-minimal varints).
        try expectAgreement([UInt8](repeating: 0x80, count: 10) + [0x00])
        try expectAgreement([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00])
        try expectAgreement([0x81, 0x80, 0x00])
    }

    @Test func randomBytes() throws {
        var random = SplitMix64(seed: 0x5A7)
        for _ in 0..<5_000 {
            let length = Int.random(in: 1...11, using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) | 0x80 }
            // Mostly well-terminated, sometimes a random last byte (which may leave the varint cut off).
            bytes[length - 1] = Bool.random(using: &random) ? bytes[length - 1] & 0x7F : bytes[length - 1]
            try expectAgreement(bytes)
        }
    }
}
