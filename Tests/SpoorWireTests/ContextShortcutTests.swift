import SpoorModel
@_spi(Testing) import SpoorWire
import Testing

/// The decoder decodes a batch's context once and each event over it when the merge is a plain override; every
/// other case goes through the merged bytes. Both must give the same events and the same errors.
@Suite struct ContextShortcutTests {
    /// Protobuf wire bytes, written by hand so that defaults, repeats and damage can be spelled out.
    struct Wire {
        var bytes: [UInt8] = []
        mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }
        mutating func field(_ number: UInt64, varint value: UInt64) { varint(number << 3); varint(value) }
        mutating func field(_ number: UInt64, _ body: [UInt8]) { varint(number << 3 | 2); varint(UInt64(body.count)); bytes += body }
        mutating func field(_ number: UInt64, _ text: String) { field(number, Array(text.utf8)) }
        mutating func fixed64(_ number: UInt64, _ value: UInt64) {
            varint(number << 3 | 1)
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
    }

    static func property(_ key: String, _ value: String) -> [UInt8] {
        var entry = Wire(), inner = Wire()
        inner.field(1, value)
        entry.field(1, key)
        entry.field(2, inner.bytes)
        return entry.bytes
    }

    static func lib(_ name: String?, version: String?, method: UInt64?) -> [UInt8] {
        var lib = Wire()
        if let name { lib.field(1, name) }
        if let version { lib.field(2, version) }
        if let method { lib.field(3, varint: method) }
        return lib.bytes
    }

    static var context: [UInt8] {
        var context = Wire()
        context.field(3, varint: 1_700_000_000_000)
        context.field(5, varint: 100)
        context.field(6, "user")
        context.field(7, "anon")
        context.field(9, lib("iOS", version: "1.0", method: nil))
        context.field(10, property("$os", "iOS"))
        context.field(10, property("plan", "pro"))
        context.field(11, "session")
        return context.bytes
    }

    /// The events to check, each over `context`: plain ones and every kind the shortcut must leave to the bytes.
    static var events: [(String, [UInt8])] {
        func event(_ build: (inout Wire) -> Void) -> [UInt8] {
            var wire = Wire()
            wire.field(1, "Click")
            wire.field(2, varint: 1)
            build(&wire)
            wire.field(13, varint: 1)
            return wire.bytes
        }
        return [
            ("plain", event { $0.field(9, lib(nil, version: nil, method: 2)); $0.field(10, property("n", "1")); $0.field(14, varint: 8) }),  // zigzag 4
            ("own ids and offsets", event { $0.field(6, "other"); $0.field(12, "orig"); $0.field(15, varint: 6); $0.fixed64(4, 7) }),
            ("overrides a shared key", event { $0.field(10, property("plan", "free")) }),
            ("explicit empty string", event { $0.field(6, "") }),
            ("explicit zero time", event { $0.field(3, varint: 0) }),
            ("explicit zero track id", event { $0.fixed64(4, 0) }),
            ("lib twice", event { $0.field(9, lib(nil, version: nil, method: 1)); $0.field(9, lib("Linux", version: nil, method: nil)) }),
            ("empty lib", event { $0.field(9, []) }),
            ("lib with an empty name", event { $0.field(9, lib("", version: nil, method: 2)) }),
            ("no type", { var wire = Wire(); wire.field(1, "x"); wire.field(13, varint: 1); return wire.bytes }()),
            ("name twice", event { $0.field(1, "Again") }),
            ("unknown field", event { $0.field(40, varint: 0) }),
            ("invalid UTF-8", event { $0.field(8, [0xFF]) }),
        ]
    }

    static func batch(context: [UInt8], events: [[UInt8]]) -> [UInt8] {
        var batch = Wire()
        batch.field(2, context)
        for event in events { batch.field(1, event) }
        return batch.bytes
    }

    static func bothWays(_ bytes: [UInt8], limits: DecodeLimits = DecodeLimits()) -> (Result<[Event], DecodeError>, Result<[Event], DecodeError>) {
        let merging = EventDecoder(limits: limits)
        merging.alwaysMergesBytes = true
        return (Result { () throws(DecodeError) in try EventDecoder(limits: limits).decodeBatch(bytes) },
                Result { () throws(DecodeError) in try merging.decodeBatch(bytes) })
    }

    @Test(arguments: events.map(\.0))
    func eachEventDecodesAlikeBothWays(name: String) throws {
        let event = try #require(Self.events.first { $0.0 == name }?.1)
        let (fast, reference) = Self.bothWays(Self.batch(context: Self.context, events: [event, event]))
        #expect(fast == reference, "\(name)")
    }

    /// protobuf-c's shortcut takes a plain override only (no field at its default); the Swift path merges by presence,
    /// which also covers explicit defaults and a repeated `lib`. Both leave what the merge cannot decide (no type,
    /// invalid bytes) to the merged bytes.
    @Test(arguments: WirePath.allCases)
    func plainEventsTakeTheShortcutAndOthersTheBytes(path: WirePath) throws {
        let decoder = EventDecoder(path: path)
        _ = try decoder.decodeBatch(Self.batch(context: Self.context, events: Self.events.prefix(3).map(\.1)))
        #expect(decoder.eventsDecodedOverContext == 3)
        // A singular field twice keeps its last value either way, and unknown fields are ignored either way.
        let plainToo: Set = path == .swift
            ? ["explicit empty string", "explicit zero time", "explicit zero track id", "lib twice", "empty lib",
               "lib with an empty name", "name twice", "unknown field"]
            : ["name twice", "unknown field"]
        for (name, event) in Self.events.dropFirst(3) {
            let before = decoder.eventsDecodedOverContext
            _ = try? decoder.decodeBatch(Self.batch(context: Self.context, events: [event]))
            #expect(decoder.eventsDecodedOverContext - before == (plainToo.contains(name) ? 1 : 0), "\(name)")
        }
    }

    @Test func aPlainEventIsWhole() throws {
        let events = try EventDecoder().decodeBatch(Self.batch(context: Self.context, events: [Self.events[0].1]))
        let event = try #require(events.first)
        #expect(event.time == 1_700_000_000_004 && event.sequence == 100 && event.distinctID == "user" && event.anonymousID == "anon")
        #expect(event.lib == LibInfo(lib: "iOS", libVersion: "1.0", method: .autoTrack))
        #expect(event.properties == ["$os": "iOS", "plan": "pro", "n": "1"] && event.sessionID == "session")
    }

    @Test func limitsCountTheMergedEvent() {
        let events = Self.events.prefix(2).map(\.1)
        for limits in [DecodeLimits(maxEventBytes: Self.context.count + 10), DecodeLimits(maxProperties: 2)] {
            let (fast, reference) = Self.bothWays(Self.batch(context: Self.context, events: events), limits: limits)
            #expect(fast == reference)
            guard case .failure = fast else { Issue.record("expected a limit to be passed: \(limits)"); continue }
        }
    }

    @Test func aBrokenOrRepeatedContextDecodesAlikeBothWays() {
        var repeated = Wire()
        repeated.bytes = Self.context
        repeated.field(6, "second")
        repeated.field(9, Self.lib(nil, version: "2.0", method: 1))
        var broken = Wire()
        broken.bytes = Self.context
        broken.field(7, [0xC0, 0x80])
        for context in [repeated.bytes, broken.bytes, []] {
            let (fast, reference) = Self.bothWays(Self.batch(context: context, events: Self.events.map(\.1).prefix(3).map { $0 }))
            #expect(fast == reference)
        }
    }

    @Test func twoContextsInOneBatch() {
        var second = Wire()
        second.field(6, "other-user")
        var batch = Wire()
        batch.field(2, Self.context)
        batch.field(2, second.bytes)
        var event = Wire()
        event.field(1, "E")
        event.field(2, varint: 1)
        event.field(13, varint: 2)
        for body in [Self.events[0].1, event.bytes, Self.events[1].1, event.bytes] { batch.field(1, body) }
        let (fast, reference) = Self.bothWays(batch.bytes)
        #expect(fast == reference)
        #expect((try? fast.get())?.map(\.distinctID) == ["user", "other-user", "other", "other-user"])
    }

    /// protobuf merges the occurrences of `lib`, and each of its fields keeps the value of its last occurrence on
    /// the wire: a later `lib` without a method keeps the earlier method (protobuf-c's own merge reset it to 0).
    @Test func aRepeatedLibKeepsEachFieldsLastValueOnTheWire() throws {
        func event(_ libs: [[UInt8]]) -> [UInt8] {
            var wire = Wire()
            wire.field(1, "E")
            wire.field(2, varint: 1)
            for lib in libs { wire.field(9, lib) }
            return wire.bytes
        }
        let cases: [([[UInt8]], LibInfo)] = [
            ([Self.lib(nil, version: nil, method: 1), Self.lib("Linux", version: nil, method: nil)],
             LibInfo(lib: "Linux", libVersion: "", method: .code)),
            ([Self.lib("iOS", version: nil, method: 2), []], LibInfo(lib: "iOS", libVersion: "", method: .autoTrack)),
            ([Self.lib("iOS", version: nil, method: 2), Self.lib(nil, version: nil, method: 0)],
             LibInfo(lib: "iOS", libVersion: "", method: .unspecified)),
            ([Self.lib("iOS", version: "1", method: 2), Self.lib(nil, version: "2", method: 1), Self.lib(nil, version: nil, method: nil)],
             LibInfo(lib: "iOS", libVersion: "2", method: .code)),
        ]
        for (libs, expected) in cases {
            #expect(try EventDecoder().decode(event(libs)).lib == expected)
            var batch = Wire()
            batch.field(1, event(libs))
            #expect(try EventDecoder().decodeBatch(batch.bytes).map(\.lib) == [expected])
        }

        // The same rule over a context: the context's two `lib`s, then the event's.
        var context = Wire()
        context.field(9, Self.lib("iOS", version: "1.0", method: 2))
        context.field(9, Self.lib(nil, version: "1.1", method: nil))
        var own = Wire()
        own.field(1, "E")
        own.field(2, varint: 1)
        own.field(13, varint: 1)
        var withLib = own
        withLib.field(9, Self.lib(nil, version: "2.0", method: nil))
        let (fast, reference) = Self.bothWays(Self.batch(context: context.bytes, events: [own.bytes, withLib.bytes]))
        #expect(fast == reference)
        #expect(try fast.get().map(\.lib) == [
            LibInfo(lib: "iOS", libVersion: "1.1", method: .autoTrack), LibInfo(lib: "iOS", libVersion: "2.0", method: .autoTrack),
        ])
    }

    /// An event's `lib` may hold unknown fields, nested as deep as the size limit allows; deciding whether the
    /// event overrides its context plainly must not follow them (a recursion per level overflowed the stack).
    @Test func deeplyNestedUnknownFieldsInLibDecodeAlikeBothWays() throws {
        // Field 9 inside field 9, 200,000 levels deep: each level is a tag and the length of the rest.
        let depth = 200_000
        var lengths = [0]
        for level in 1...depth {
            var header = Wire()
            header.varint(UInt64(lengths[level - 1]))
            lengths.append(1 + header.bytes.count + lengths[level - 1])
        }
        var event = Wire()
        event.field(1, "E")
        event.field(2, varint: 1)
        event.field(13, varint: 1)
        for level in stride(from: depth, through: 1, by: -1) {
            event.varint(9 << 3 | 2)
            event.varint(UInt64(lengths[level - 1]))
        }
        let (fast, reference) = Self.bothWays(Self.batch(context: Self.context, events: [event.bytes]))
        #expect(fast == reference)
        #expect(try fast.get().map(\.name) == ["E"])
    }
}
