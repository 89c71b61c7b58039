import Testing
import SpoorModel
import SpoorWire

@Suite("Decoding malformed input")
struct MalformedInputTests {
    /// A valid minimal event prefix: type = track.
    private let typeTrack: [UInt8] = [0x10, 0x01]

    private func decodeError(_ bytes: [UInt8], limits: DecodeLimits = DecodeLimits()) -> DecodeError? {
        #expect(throws: DecodeError.self) { try EventDecoder(limits: limits).decode(bytes) }
    }

    @Test func truncatedInsideAString() throws {
        let bytes = try Fixtures.encode(Fixtures.event(name: "BuyProduct"))
        // Field 1 (event) comes first: tag, length 10, then the name; cut it in the middle.
        let error = decodeError(Array(bytes.prefix(5)))
        #expect(error?.kind == .lengthPastEnd)
        #expect(error?.field == "event")
        #expect(error?.offset == 1)
        #expect(error?.detail == 10)
    }

    @Test func truncatedInsideAVarint() {
        let error = decodeError(typeTrack + [0x18, 0xFF, 0xFF])
        #expect(error?.kind == .truncated)
        #expect(error?.field == "time")
        #expect(error?.offset == 3)
    }

    @Test func truncatedFixed64() {
        let error = decodeError(typeTrack + [0x21, 1, 2, 3])
        #expect(error?.kind == .truncated)
        #expect(error?.field == "track_id")
    }

    @Test func everyPrefixOfAValidEventIsHandled() throws {
        let bytes = try Fixtures.encode(Fixtures.reference)
        let decoder = EventDecoder()
        var failures = 0
        for length in 0..<bytes.count {
            do { _ = try decoder.decode(Array(bytes.prefix(length))) } catch { failures += 1 }
        }
        // Most prefixes end inside a field; none may crash or decode to the full event.
        #expect(failures > bytes.count / 2)
        #expect(try decoder.decode(bytes) == Fixtures.reference)
    }

    @Test func wrongWireType() {
        let error = decodeError([0x08, 0x01] + typeTrack) // field 1 (a string) as a varint
        #expect(error?.kind == .wrongWireType)
        #expect(error?.field == "event")
        #expect(error?.offset == 0)
        #expect(error?.detail == 0)
    }

    @Test func overlongVarint() {
        let error = decodeError([0x10] + Array(repeating: 0xFF, count: 10) + [0x01])
        #expect(error?.kind == .overlongVarint)
        #expect(error?.field == "type")
        #expect(error?.offset == 1)
    }

    @Test func tenthVarintByteMayOnlyCarryOneBit() {
        let error = decodeError(typeTrack + [0x18] + Array(repeating: 0xFF, count: 9) + [0x02])
        #expect(error?.kind == .overlongVarint)
    }

    @Test func lengthPastTheEnd() {
        let error = decodeError(typeTrack + [0x0A, 0x05, 0x41, 0x42])
        #expect(error?.kind == .lengthPastEnd)
        #expect(error?.offset == 3)
        #expect(error?.detail == 5)
    }

    @Test func hugeLengthPrefix() {
        let error = decodeError(typeTrack + [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(error?.kind == .lengthPastEnd)
        #expect(error?.detail == UInt64.max >> 1)
    }

    @Test("invalid UTF-8", arguments: [
        [0xC3, 0x28] as [UInt8],        // bad continuation
        [0xC0, 0x80],                   // overlong NUL
        [0xED, 0xA0, 0x80],             // surrogate
        [0xF4, 0x90, 0x80, 0x80],       // past U+10FFFF
        [0xE4, 0xB8],                   // cut short
        [0xFF],
    ])
    func invalidUTF8(bad: [UInt8]) {
        let error = decodeError(typeTrack + [0x0A, UInt8(bad.count + 1), 0x41] + bad)
        #expect(error?.kind == .invalidUTF8)
        #expect(error?.field == "event")
        #expect(error?.offset == 5, "points at the bad sequence")
    }

    @Test func invalidUTF8DeepInAList() {
        // properties { key "k" value { list_value { values "\xFF" } } }
        let list: [UInt8] = [0x0A, 0x01, 0xFF]
        let value: [UInt8] = [0x32, UInt8(list.count)] + list
        let entry: [UInt8] = [0x0A, 0x01, 0x6B, 0x12, UInt8(value.count)] + value
        let error = decodeError(typeTrack + [0x52, UInt8(entry.count)] + entry)
        #expect(error?.kind == .invalidUTF8)
        #expect(error?.field == "properties.value.list_value.values")
        #expect(error?.offset == 13)
    }

    @Test func embeddedNUL() {
        let error = decodeError(typeTrack + [0x0A, 0x03, 0x41, 0x00, 0x42])
        #expect(error?.kind == .embeddedNUL)
        #expect(error?.offset == 5)
    }

    @Test("invalid tags", arguments: [[0x00, 0x01] as [UInt8], [0x0B], [0x0C], [0x0E, 0x00], [0x0F, 0x00]])
    func invalidTags(bytes: [UInt8]) {
        #expect(decodeError(typeTrack + bytes)?.kind == .invalidTag)
    }

    @Test func nonFiniteDouble() {
        // properties { key "d" value { double_value NaN } }
        let nan: [UInt8] = [0, 0, 0, 0, 0, 0, 0xF8, 0x7F]
        let value: [UInt8] = [0x19] + nan
        let entry: [UInt8] = [0x0A, 0x01, 0x64, 0x12, UInt8(value.count)] + value
        let error = decodeError(typeTrack + [0x52, UInt8(entry.count)] + entry)
        #expect(error?.kind == .nonFiniteDouble)
        #expect(error?.field == "properties.value.double_value")
    }

    @Test func propertyWithoutValue() {
        let entry: [UInt8] = [0x0A, 0x01, 0x6B]
        #expect(decodeError(typeTrack + [0x52, UInt8(entry.count)] + entry)?.kind == .missingValue)
        let emptyValue: [UInt8] = [0x0A, 0x01, 0x6B, 0x12, 0x00]
        #expect(decodeError(typeTrack + [0x52, UInt8(emptyValue.count)] + emptyValue)?.kind == .missingValue)
    }

    @Test func eventTypeOutOfRangeOrMissing() {
        // Open enums keep any int32 (OpenEnumTests); a value past int32 is no enum value at all.
        #expect(decodeError([0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20])?.kind == .invalidEnum)
        #expect(decodeError([])?.kind == .invalidEnum)
        #expect(decodeError([0x0A, 0x01, 0x41])?.field == "type")
    }

    @Test func limits() throws {
        let limits = DecodeLimits(maxEventBytes: 4096, maxProperties: 3, maxStringBytes: 16, maxListLength: 2)
        let tooMany = try Fixtures.encode(Fixtures.event(["a": 1, "b": 2, "c": 3, "d": 4]))
        #expect(decodeError(tooMany, limits: limits)?.kind == .tooManyProperties)
        let longString = try Fixtures.encode(Fixtures.event(["a": .string(String(repeating: "x", count: 17))]))
        let error = decodeError(longString, limits: limits)
        #expect(error?.kind == .stringTooLong)
        #expect(error?.detail == 17)
        let longList = try Fixtures.encode(Fixtures.event(["a": ["1", "2", "3"]]))
        #expect(decodeError(longList, limits: limits)?.kind == .listTooLong)
        let big = try Fixtures.encode(Fixtures.event((0..<3).reduce(into: Properties()) { $0["k\($1)"] = .string(String(repeating: "y", count: 16)) }))
        #expect(decodeError(big, limits: DecodeLimits(maxEventBytes: big.count - 1))?.kind == .eventTooLarge)
        #expect(try EventDecoder(limits: DecodeLimits(maxEventBytes: big.count)).decode(big).properties.count == 3)
    }

    @Test func unknownFieldsAreSkipped() throws {
        let event = Fixtures.reference
        var bytes = try Fixtures.encode(event)
        bytes += [0xF8, 0x06, 0x2A]                 // field 111, varint 42
        bytes += [0xFA, 0x06, 0x02, 0x41, 0x42]     // field 111, bytes "AB"
        bytes += [0xFD, 0x06, 1, 2, 3, 4]           // field 111, fixed32
        #expect(try EventDecoder().decode(bytes) == event)
    }

    @Test func batchErrorsNameTheEventAndAbsoluteOffset() throws {
        let encoder = EventEncoder()
        var batch: [UInt8] = []
        try encoder.appendBatchEntry(Fixtures.reference, to: &batch)
        let firstLength = batch.count
        batch += [0x0A, 0x04, 0x10, 0x01, 0x0A, 0x05] // second event: name length past its end
        let error = #expect(throws: DecodeError.self) { try EventDecoder().decodeBatch(batch) }
        #expect(error?.eventIndex == 1)
        #expect(error?.kind == .lengthPastEnd)
        #expect(error?.offset == firstLength + 4 + 1)
        #expect(error?.description.hasPrefix("event 1, event at byte") == true)
    }

    @Test func batchFramingErrors() {
        #expect(throws: DecodeError.self) { try EventDecoder().decodeBatch([0x0A, 0x7F, 0x00]) }
        #expect(throws: DecodeError.self) { try EventDecoder().decodeBatch([0x08, 0x01]) } // events as a varint
    }

    /// Seeded random corruption of valid encodings: every input is decoded or refused, never a crash,
    /// and whatever decodes re-encodes to an event that decodes the same.
    @Test func randomCorruptionNeverCrashes() throws {
        var random = SplitMix64(seed: 0x5EED)
        let encoder = EventEncoder()
        let decoder = EventDecoder()
        let seeds = [Fixtures.reference, Fixtures.event(["l": ["a", "bb"], "d": .date(5), "f": 1.5, "s": "中文"])]
        var decoded = 0
        for round in 0..<20_000 {
            var bytes = try encoder.encode(seeds[round % seeds.count])
            for _ in 0...Int.random(in: 0..<4, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: index)
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
                }
                if bytes.isEmpty { break }
            }
            guard let event = try? decoder.decode(bytes) else { continue }
            decoded += 1
            #expect(try decoder.decode(try encoder.encode(event)) == event)
        }
        #expect(decoded > 0)
    }
}

@Suite("Limits hold on repeated occurrences")
struct MergedFieldLimitTests {
    private static func list(_ count: Int) -> [UInt8] {
        let items = (0..<count).flatMap { _ in [0x0A, 0x01, 0x78] as [UInt8] }
        return [0x32, UInt8(items.count)] + items
    }

    /// protobuf may merge repeated occurrences of a message field; a list spread over them must
    /// still respect the limit, whichever way protobuf-c resolves the repetition.
    @Test("a list spread over repeated fields", arguments: [
        // one Value holding two list_value fields
        { () -> [UInt8] in
            let value = list(2) + list(2)
            return [0x0A, 0x01, 0x6B, 0x12, UInt8(value.count)] + value
        }(),
        // one entry holding two Value fields
        { () -> [UInt8] in
            let value = list(2)
            let one: [UInt8] = [0x12, UInt8(value.count)] + value
            return [0x0A, 0x01, 0x6B] + one + one
        }(),
    ])
    func repeatedListFields(entry: [UInt8]) throws {
        let bytes: [UInt8] = [0x10, 0x01, 0x52, UInt8(entry.count)] + entry
        do {
            let event = try EventDecoder(limits: DecodeLimits(maxListLength: 3)).decode(bytes)
            guard case .list(let items) = event.properties["k"] else {
                Issue.record("no list decoded")
                return
            }
            #expect(items.count <= 3)
        } catch {
            #expect(error.kind == .listTooLong)
        }
    }
}
