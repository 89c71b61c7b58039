import SpoorModel
import Testing
import SpoorWire

/// The Swift varint reader (log records, shared contexts, frames) and the C decoder (events) must accept exactly
/// the same varints and read the same values from them: both are fed the same bytes, and both are held to the
/// protobuf rule written out here, so that two decoders that rejected everything would not "agree".
@Suite("Varint: the Swift reader agrees with the C decoder")
struct VarintAgreementTests {
    /// What a decoder makes of a varint: its value, or why it is refused.
    enum Verdict: Equatable, CustomStringConvertible {
        case value(UInt64)
        case refused(DecodeError.Kind)

        var value: UInt64? {
            if case .value(let value) = self { return value }
            return nil
        }

        var description: String {
            switch self {
            case .value(let value): "value \(value)"
            case .refused(let kind): "refused (\(kind))"
            }
        }
    }

    /// The rule, for varints built as these tests build them (every byte but the last has its continuation
    /// bit): at most ten bytes, the tenth holding bit 63 only; a varint whose last byte still continues is cut
    /// off by the end of the input. Written out apart from both decoders.
    static func rule(_ varint: [UInt8]) -> Verdict {
        if varint.count > 10 || (varint.count == 10 && varint[9] > 1) { return .refused(.overlongVarint) }
        if varint.last! >= 0x80 { return .refused(.truncated) }
        var value: UInt64 = 0
        for (index, byte) in varint.enumerated() { value |= UInt64(byte & 0x7F) << (7 * UInt64(index)) }
        return .value(value)
    }

    /// What the C decoder makes of `varint` as an event's `sequence` (field 5, wire type 0), appended to a valid
    /// event: the last value of a scalar field wins, so a decoded event carries exactly this varint's value, and
    /// the varint is the last thing in the input.
    private func decodedByC(_ varint: [UInt8]) throws -> Verdict {
        let bytes = try Fixtures.encode(Fixtures.event()) + [0x28] + varint
        do {
            return .value(try EventDecoder().decode(bytes).sequence)
        } catch {
            return .refused(error.kind)
        }
    }

    private func readBySwift(_ varint: [UInt8]) -> UInt64? {
        var index = varint.startIndex
        guard let value = Varint.read(varint, at: &index), index == varint.endIndex else { return nil }
        return value
    }

    /// Both decoders give the rule's verdict: the same value, or a refusal (with the rule's reason, from C).
    @discardableResult
    private func expectAgreement(_ varint: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> Verdict {
        let expected = Self.rule(varint)
        #expect(try decodedByC(varint) == expected, "\(varint)", sourceLocation: sourceLocation)
        #expect(readBySwift(varint) == expected.value, "\(varint)", sourceLocation: sourceLocation)
        return expected
    }

    @Test func boundariesOfEveryLength() throws {
        for value in [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), UInt64(Int64.max), UInt64.max] as [UInt64] {
            var bytes: [UInt8] = []
            Varint.append(value, to: &bytes)
            #expect(Self.rule(bytes) == .value(value))
            #expect(readBySwift(bytes) == value)
            #expect(try decodedByC(bytes) == .value(value))
        }
    }

    @Test func theTenthByteHoldsOneBitOnly() throws {
        let nine = [UInt8](repeating: 0xFF, count: 9)
        for last in [0x00, 0x01, 0x02, 0x03, 0x7F] as [UInt8] {
            try expectAgreement(nine + [last])
        }
        #expect(readBySwift(nine + [0x01]) == UInt64.max)
        #expect(try decodedByC(nine + [0x01]) == .value(UInt64.max))
        #expect(readBySwift(nine + [0x02]) == nil)
        #expect(try decodedByC(nine + [0x02]) == .refused(.overlongVarint))
    }

    @Test func tooLongCutOffAndPaddedForms() throws {
        // Eleven bytes; zero padding up to ten bytes (legal: protobuf allows non-minimal varints); cut off.
        #expect(try expectAgreement([UInt8](repeating: 0x80, count: 10) + [0x00]) == .refused(.overlongVarint))
        #expect(try expectAgreement([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]) == .value(0))
        #expect(try expectAgreement([0x81, 0x80, 0x00]) == .value(1))
        #expect(try expectAgreement([0x81, 0x80]) == .refused(.truncated))
    }

    @Test func randomBytes() throws {
        var random = SplitMix64(seed: 0x5A7)
        var verdicts: [String: Int] = [:]
        for _ in 0..<5_000 {
            let length = Int.random(in: 1...11, using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) | 0x80 }
            // Mostly well-terminated, sometimes a random last byte (which may leave the varint cut off).
            bytes[length - 1] = Bool.random(using: &random) ? bytes[length - 1] & 0x7F : bytes[length - 1]
            switch try expectAgreement(bytes) {
            case .value: verdicts["value", default: 0] += 1
            case .refused(let kind): verdicts[kind.rawValue, default: 0] += 1
            }
        }
        // Every verdict was reached many times, so the agreement covered values and both reasons.
        #expect(verdicts.keys.sorted() == ["overlongVarint", "truncated", "value"])
        #expect(verdicts.values.allSatisfy { $0 >= 500 }, "\(verdicts)")
    }
}
