import Testing
import SpoorModel
import SpoorWire

@Suite("Encoding and decoding round trips")
struct RoundTripTests {
    private func roundTrip(_ event: Event) throws -> Event {
        try EventDecoder().decode(try Fixtures.encode(event))
    }

    @Test("every value type", arguments: [
        ("string", PropertyValue.string("hello")),
        ("int", .int(-12345)),
        ("double", .double(3.25)),
        ("bool true", .bool(true)),
        ("bool false", .bool(false)),
        ("date", .date(1_767_225_600_123)),
        ("list", .list(["a", "b", "c"])),
    ])
    func valueTypes(label: String, value: PropertyValue) throws {
        let event = Fixtures.event(["value": value])
        #expect(try roundTrip(event) == event, "\(label)")
    }

    @Test("edge values survive exactly", arguments: [
        PropertyValue.string(""), .string("中文字符"), .string("😀👩‍👩‍👧‍👦🏳️‍🌈"), .string("e\u{301}\u{302}\u{303}"),
        .string(String(repeating: "x", count: 8192)),
        .int(.min), .int(.max), .int(0), .int(-1),
        .double(.leastNonzeroMagnitude), .double(-.leastNonzeroMagnitude), .double(.leastNormalMagnitude),
        .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude), .double(0.1 + 0.2),
        .date(.min), .date(.max), .date(0), .date(-1),
        .list([]), .list([""]), .list(Array(repeating: "項目", count: 500)),
    ])
    func edges(value: PropertyValue) throws {
        let event = Fixtures.event(["edge": value])
        #expect(try roundTrip(event) == event)
    }

    @Test func signedZeroKeepsItsSign() throws {
        let back = try roundTrip(Fixtures.event(["pos": 0.0, "neg": -0.0]))
        guard case .double(let negative) = back.properties["neg"], case .double(let positive) = back.properties["pos"] else {
            Issue.record("zeros did not come back as doubles")
            return
        }
        #expect(negative == 0 && negative.sign == .minus)
        #expect(positive == 0 && positive.sign == .plus)
    }

    @Test func manyProperties() throws {
        var properties = Properties()
        for index in 0..<1000 { properties["p\(index)"] = index % 2 == 0 ? .int(Int64(index)) : .string("v\(index)") }
        let event = Fixtures.event(properties)
        #expect(try roundTrip(event) == event)
    }

    @Test("every event type and optional field", arguments: EventType.allCases)
    func eventTypes(type: EventType) throws {
        var event = Fixtures.event(["k": "v"], name: type == .track ? "Buy" : "")
        event.type = type
        event.loginID = nil
        event.sessionID = nil
        event.originalID = type == .trackSignup ? "anon-1" : nil
        event.lib.method = .autoTrack
        event.lib.appVersion = ""
        #expect(try roundTrip(event) == event)
    }

    @Test func emptyStringsInEveryField() throws {
        let event = Event(name: "", type: .profileSet, time: 0, distinctID: "", anonymousID: "",
                          lib: LibInfo(lib: "", libVersion: "", method: .unspecified))
        #expect(try roundTrip(event) == event)
    }

    @Test func batchEntriesConcatenateIntoABatch() throws {
        let encoder = EventEncoder()
        var batch: [UInt8] = []
        let events = (0..<50).map { index in
            var event = Fixtures.event(["index": .int(Int64(index)), "tag": .string(String(repeating: "z", count: index * 7))])
            event.sequence = UInt64(index)
            return event
        }
        for event in events { try encoder.appendBatchEntry(event, to: &batch) }
        #expect(try EventDecoder().decodeBatch(batch) == events)
        #expect(try EventDecoder().decodeBatch([]) == [])
    }

    @Test func encoderIsReusableAcrossShapes() throws {
        let encoder = EventEncoder()
        let decoder = EventDecoder()
        let small = Fixtures.event(["a": 1])
        var big = Fixtures.event()
        for index in 0..<200 { big.properties["k\(index)"] = .list(["x", "y", "\(index)"]) }
        for event in [small, big, small, Fixtures.reference, big] {
            #expect(try decoder.decode(try encoder.encode(event)) == event)
        }
    }

    @Test("the encoder refuses what protobuf-c cannot carry", arguments: [
        (Fixtures.event(["nan": .double(.nan)]), "properties.value.double_value"),
        (Fixtures.event(["inf": .double(.infinity)]), "properties.value.double_value"),
        (Fixtures.event(["nul": "a\u{0}b"]), "properties.value.string_value"),
        (Fixtures.event(["k\u{0}": 1]), "properties.key"),
        (Fixtures.event(["l": .list(["ok", "\u{0}"])]), "properties.value.list_value.values"),
        (Fixtures.event(name: "bad\u{0}name"), "event"),
    ])
    func encoderRefuses(event: Event, field: String) throws {
        var buffer: [UInt8] = [1, 2, 3]
        let error = #expect(throws: EncodeError.self) { try EventEncoder().append(event, to: &buffer) }
        #expect(error?.field == field)
        #expect(buffer == [1, 2, 3], "a failed encode leaves the buffer as it was")
    }
}

@Suite("Decoder memory bound")
struct DecoderMemoryTests {
    /// The inputs that make protobuf-c allocate the most per wire byte still fit the decoder's arena.
    @Test func densestValidInputsDecode() throws {
        var lists = Properties()
        for index in 0..<1000 { lists[String(index)] = .list([]) }
        var bools = Properties()
        for index in 0..<1000 { bools[String(index)] = .bool(false) }
        var event = Fixtures.event()
        event.properties = ["l": .list(Array(repeating: "", count: 500))]
        for properties in [lists, bools] {
            var dense = Fixtures.event(properties)
            dense.name = ""
            #expect(try EventDecoder().decode(try Fixtures.encode(dense)) == dense)
        }
        #expect(try EventDecoder().decode(try Fixtures.encode(event)) == event)
    }
}

@Suite("Deterministic encoding")
struct DeterministicEncodingTests {
    /// The same event encodes to the same bytes however its dictionary was built: properties go out in key order.
    @Test func sameEventSameBytes() throws {
        let keys = (0..<40).map { "key\($0)" }
        var forward = Properties(minimumCapacity: 64)
        for (index, key) in keys.enumerated() { forward[key] = .int(Int64(index)) }
        var backward = Properties()
        for (index, key) in keys.enumerated().reversed() { backward[key] = .int(Int64(index)) }
        let encoder = EventEncoder()
        let a = try encoder.encode(Fixtures.event(forward))
        let b = try encoder.encode(Fixtures.event(backward))
        #expect(a == b)
        // Few properties take the other sorting path.
        #expect(try encoder.encode(Fixtures.event(["b": 1, "a": 2, "c": 3])) == encoder.encode(Fixtures.event(["c": 3, "a": 2, "b": 1])))
    }
}
