import SpoorModel
import SpoorWire
import Testing

/// One encoder keeps its scratch memory between events; these check that events of
/// changing shapes, and failures in between, do not leak into the next encoding.
@Suite struct EncoderReuseTests {
    static let lib = LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code)

    /// An event with `count` properties; every third holds a list of `count % 7` strings.
    static func event(properties count: Int) -> Event {
        var properties: Properties = [:]
        for index in 0..<count {
            properties["p\(index)"] = switch index % 3 {
            case 0: .list((0..<(count % 7)).map { "item-\(index)-\($0)" })
            case 1: .string(String(repeating: "x", count: index))
            default: .int(Int64(index) * -17)
            }
        }
        return Event(name: "Shape\(count)", time: Int64(count), sequence: UInt64(count), distinctID: "d",
                     anonymousID: "a", lib: lib, properties: properties)
    }

    @Test func eventsOfGrowingAndShrinkingShapesRoundTrip() throws {
        let encoder = EventEncoder()
        let decoder = EventDecoder()
        for count in [0, 1, 3, 17, 2, 64, 5, 40, 0, 33] {
            let event = Self.event(properties: count)
            #expect(try decoder.decode(try encoder.encode(event)) == event, "\(count) properties")
        }
    }

    @Test func batchEntriesAppendedByOneEncoderDecodeInOrder() throws {
        let encoder = EventEncoder()
        let events = [5, 40, 1, 20].map { Self.event(properties: $0) }
        var batch: [UInt8] = []
        for event in events { try encoder.appendBatchEntry(event, to: &batch) }
        #expect(try EventDecoder().decodeBatch(batch) == events)
    }

    /// Fields whose encoding costs more than their text: empty strings, which the text block does
    /// not hold but a oneof or a list still writes, and ten-byte varints.
    @Test func eventsOfMostlyEmptyStringsAndLongVarintsRoundTrip() throws {
        var properties: Properties = ["": "", "min": .int(.min), "date": .date(-1), "d": .double(-0.0)]
        for index in 0..<50 { properties["e\(index)"] = index.isMultiple(of: 2) ? "" : .list(["", "", ""]) }
        properties["blanks"] = .list(Array(repeating: "", count: 400))
        let event = Event(name: "", type: .profileDelete, time: .min, trackID: .max, sequence: .max, distinctID: "",
                          anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .autoTrack), properties: properties)
        let encoder = EventEncoder()
        #expect(try EventDecoder().decode(try encoder.encode(event)) == event)
        var batch: [UInt8] = []
        try encoder.appendBatchEntry(event, to: &batch)
        #expect(try EventDecoder().decodeBatch(batch) == [event])
    }

    /// Batch entries whose length varint takes one, two and three bytes.
    @Test func batchEntriesOfEverySizeClassDecode() throws {
        let small = Event(name: "s", time: 1, distinctID: "d", anonymousID: "a", lib: Self.lib)
        let medium = Self.event(properties: 12)
        var large = Self.event(properties: 3)
        for index in 0..<3 { large.properties["big\(index)"] = .string(String(repeating: "z", count: 8000)) }
        let events = [small, large, medium, small, large]
        let encoder = EventEncoder()
        var batch: [UInt8] = [0xFF] // bytes already in the buffer stay in front
        for event in events { try encoder.appendBatchEntry(event, to: &batch) }
        #expect(batch[0] == 0xFF)
        #expect(try EventDecoder().decodeBatch(Array(batch.dropFirst())) == events)
        // An entry is its tag, its length and the event's own encoding.
        let single = try encoder.encode(large)
        var entry: [UInt8] = []
        try encoder.appendBatchEntry(large, to: &entry)
        #expect(entry.count == single.count + 4) // tag + three-byte length
        #expect(Array(entry.suffix(single.count)) == single)
    }

    /// An entry's length covers the event and its suffix; around each size where the length varint grows a byte
    /// (127/128 and 16383/16384 bytes) the entry has the shortest header and decodes with the suffix's fields.
    @Test func entriesWithASuffixHaveTheShortestHeaderAtEverySizeClassBoundary() throws {
        let encoder = EventEncoder()
        var carrier = Event(name: "", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .unspecified))
        carrier.properties["tail"] = "t"
        let suffix = try encoder.encode(carrier)
        var seen: Set<Int> = []
        for padding in Array(0..<200) + Array(16_150..<16_400) {
            let event = Event(
                name: "Padded", time: 1, distinctID: "d", anonymousID: "a", lib: Self.lib,
                properties: ["a": .string(String(repeating: "a", count: padding / 2)),
                             "b": .string(String(repeating: "b", count: padding - padding / 2))])
            let bodySize = try encoder.encode(event).count + suffix.count
            guard [128, 16384].contains(where: { abs(bodySize - $0) <= 3 }) else { continue }
            seen.insert(bodySize)
            var entry: [UInt8] = [0xFF]
            try encoder.appendBatchEntry(event, suffix: suffix, to: &entry)
            let header = bodySize < 128 ? 2 : bodySize < 16384 ? 3 : 4
            #expect(entry.count == 1 + header + bodySize, "body of \(bodySize) bytes")
            var whole = event
            whole.properties["tail"] = "t"
            let decoded = try EventDecoder().decodeBatch(Array(entry.dropFirst()))
            #expect(decoded == [whole], "body of \(bodySize) bytes: \(decoded) vs \(whole)")
        }
        #expect(seen.isSuperset(of: [126, 127, 128, 129, 16382, 16383, 16384, 16385]))
    }

    @Test func aFailedEncodingLeavesTheBufferAndTheEncoderUsable() throws {
        let encoder = EventEncoder()
        var buffer: [UInt8] = []
        try encoder.append(Self.event(properties: 4), to: &buffer)
        let before = buffer

        var bad = Self.event(properties: 30)
        bad.properties["nul"] = "a\u{0}b"
        #expect(throws: EncodeError.self) { try encoder.append(bad, to: &buffer) }
        #expect(buffer == before)

        bad.properties["nul"] = .double(.nan)
        #expect(throws: EncodeError.self) { try encoder.appendBatchEntry(bad, to: &buffer) }
        #expect(buffer == before)

        let next = Self.event(properties: 9)
        try encoder.append(next, to: &buffer)
        let tail = Array(buffer[before.count...])
        #expect(try EventDecoder().decode(tail) == next)
    }

    /// Where a test puts a NUL; the raw value is the field the error must name.
    enum NULPlace: String, CaseIterable, Sendable {
        case name = "event"
        case loginID = "login_id"
        case appVersion = "lib.app_version"
        case key = "properties.key"
        case stringValue = "properties.value.string_value"
        case listItem = "properties.value.list_value.values"

        func corrupt(_ event: inout Event) {
            switch self {
            case .name: event.name = "a\u{0}"
            case .loginID: event.loginID = "\u{0}"
            case .appVersion: event.lib.appVersion = "1\u{0}2"
            case .key: event.properties["k\u{0}"] = 1
            case .stringValue: event.properties["s"] = "\u{0}"
            case .listItem: event.properties["l"] = ["ok", "x\u{0}"]
            }
        }
    }

    @Test(arguments: NULPlace.allCases)
    func embeddedNULIsReportedWithItsField(place: NULPlace) throws {
        let encoder = EventEncoder()
        var event = Self.event(properties: 6)
        place.corrupt(&event)
        let error = #expect(throws: EncodeError.self) { try encoder.encode(event) }
        #expect(error?.field == place.rawValue)
        // The same encoder goes on with a clean event.
        let clean = Self.event(properties: 6)
        #expect(try EventDecoder().decode(try encoder.encode(clean)) == clean)
    }
}
