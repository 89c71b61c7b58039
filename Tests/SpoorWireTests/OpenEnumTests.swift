import SpoorModel
import SpoorWire
import Testing

/// Proto3 enums are open: an event type or lib method a newer schema adds is kept, not refused,
/// so an older collector or `spoor decode` passes a newer SDK's events on unchanged.
@Suite struct OpenEnumTests {
    /// An event as Google's runtime writes it with a schema that has type 99 and method 7,
    /// built byte by byte here, in field-number order (as Spoor's encoder writes).
    static let futureEvent: [UInt8] = [
        0x0A, 0x06] + Array("Future".utf8) + [   // 1 event
        0x10, 0x63,                              // 2 type = 99
        0x18, 0xE8, 0x07,                        // 3 time = 1000
        0x21, 1, 2, 3, 4, 5, 6, 7, 8,            // 4 track_id
        0x28, 0x05,                              // 5 sequence = 5
        0x32, 0x01, 0x75,                        // 6 distinct_id = "u"
        0x3A, 0x01, 0x61,                        // 7 anonymous_id = "a"
        0x4A, 0x08,                              // 9 lib
        0x0A, 0x01, 0x4C, 0x12, 0x01, 0x31,      //   lib = "L", lib_version = "1"
        0x18, 0x07,                              //   method = 7
    ]

    @Test func unknownTypeAndMethodAreKept() throws {
        let event = try EventDecoder().decode(Self.futureEvent)
        #expect(event.type == .unrecognized(99))
        #expect(event.type.rawValue == 99)
        #expect(event.lib.method == .unrecognized(7))
        #expect(event.name == "Future")
        #expect(event.sequence == 5)
    }

    @Test func reEncodingGivesTheSameBytes() throws {
        let event = try EventDecoder().decode(Self.futureEvent)
        #expect(try EventEncoder().encode(event) == Self.futureEvent)
        var batch: [UInt8] = []
        try EventEncoder().appendBatchEntry(event, to: &batch)
        #expect(try EventDecoder().decodeBatch(batch) == [event])
    }

    @Test func jsonCarriesUnknownValuesAsNumbers() throws {
        let event = try EventDecoder().decode(Self.futureEvent)
        let line = EventJSON.encode(event)
        #expect(line.contains(#""type":99,"#), "\(line)")
        #expect(line.contains(#""$lib_method":7,"#), "\(line)")
        let back = try EventJSON.decode(line)
        #expect(back == event)
        #expect(try EventEncoder().encode(back) == Self.futureEvent)
    }

    @Test func negativeValuesAreInt32s() throws {
        // -3 as protobuf writes a negative enum: the int64 sign extension, ten bytes.
        let minusThree: [UInt8] = [0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        let event = try EventDecoder().decode([0x10] + minusThree)
        #expect(event.type == .unrecognized(-3))
        // Spoor always writes `lib`, even empty: the type's bytes come first, unchanged.
        let again = try EventEncoder().encode(event)
        #expect(Array(again.prefix(11)) == [0x10] + minusThree, "\(again)")
        #expect(try EventDecoder().decode(again) == event)
    }

    @Test func knownNumbersNeverBecomeUnrecognized() {
        for type in EventType.allCases { #expect(EventType(rawValue: type.rawValue) == type) }
        #expect(EventType(rawValue: 9) == .unrecognized(9))
        #expect(LibMethod(rawValue: 2) == .autoTrack)
        #expect(LibMethod(rawValue: 3) == .unrecognized(3))
    }

    @Test func typeZeroAndValuesPastInt32AreStillRefused() {
        let past: [UInt8] = [0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]
        #expect(throws: DecodeError.self) { try EventDecoder().decode([0x10, 0x00]) }
        do {
            _ = try EventDecoder().decode(past)
            Issue.record("a type past int32 decoded")
        } catch {
            #expect(error.kind == .invalidEnum)
            #expect(error.field == "type")
        }
    }
}
