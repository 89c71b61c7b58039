import SpoorModel
import SpoorWire
import Testing

/// The one field walk over encoded events and batches: every field found with its name, number, wire type, value
/// and bytes; every kind of damage a typed error at the right byte, never a crash.
@Suite struct FieldCursorTests {
    /// Every field of `bytes` until the end, or the error that stopped the walk.
    static func walk(_ bytes: [UInt8], from offset: Int = 0) -> (fields: [FieldCursor.Field], error: DecodeError?) {
        var fields: [FieldCursor.Field] = []
        do {
            try bytes.withBytes { raw throws(DecodeError) in
                var cursor = FieldCursor(raw, from: offset)
                while let field = try cursor.next(in: "event") { fields.append(field) }
            }
        } catch {
            return (fields, error)
        }
        return (fields, nil)
    }

    @Test func walksEveryFieldOfAnEncodedEventByName() throws {
        let event = Event(
            name: "Buy", type: .track, time: 1_700_000_000_000, trackID: 0x0102_0304_0506_0708, sequence: 7,
            distinctID: "d", anonymousID: "a", lib: LibInfo(lib: "L", libVersion: "1", method: .code),
            properties: ["k": 1], sessionID: "s")
        let bytes = try EventEncoder().encode(event)
        let (fields, error) = Self.walk(bytes)
        #expect(error == nil)
        #expect(fields.map(\.eventField) == [.event, .type, .time, .trackID, .sequence, .distinctID, .anonymousID, .lib, .properties,
                                             .sessionID])
        #expect(fields.first?.range.lowerBound == 0)
        #expect(fields.last?.range.upperBound == bytes.count)
        for (field, next) in zip(fields, fields.dropFirst()) { #expect(field.range.upperBound == next.range.lowerBound) }
        let byName = Dictionary(fields.map { ($0.eventField!, $0) }, uniquingKeysWith: { $1 })
        #expect(byName[.event].map { Array(bytes[$0.body]) } == Array("Buy".utf8))
        #expect(byName[.event]?.wireType == .lengthDelimited)
        #expect(byName[.event]?.value == 3)
        #expect(byName[.time]?.value == 1_700_000_000_000)
        #expect(byName[.time]?.wireType == .varint)
        #expect(byName[.trackID]?.value == 0x0102_0304_0506_0708)
        #expect(byName[.trackID]?.wireType == .fixed64)
        #expect(byName[.sequence]?.value == 7)
    }

    @Test func readsFixed32AndUnknownFieldsAndStartsAtAnOffset() {
        // field 16 fixed32 = 0x04030201, then field 3 = 5; the walk from offset 6 sees the second only.
        let bytes: [UInt8] = [0x85, 0x01, 0x01, 0x02, 0x03, 0x04, 0x18, 0x05]
        let (fields, error) = Self.walk(bytes)
        #expect(error == nil)
        #expect(fields.map(\.number) == [16, 3])
        #expect(fields.first?.eventField == nil)
        #expect(fields.first?.wireType == .fixed32)
        #expect(fields.first?.value == 0x0403_0201)
        #expect(fields.first?.body == 2..<6)
        #expect(Self.walk(bytes, from: 6).fields.map(\.eventField) == [.time])
        // An offset past the end is the end, not a read past it.
        #expect(Self.walk(bytes, from: 100).fields.isEmpty)
        #expect(Self.walk([]).fields.isEmpty)
        #expect(Self.walk([]).error == nil)
        // The key and the value read apart, as the batch walk does to judge the wire type in between.
        let numbers = try? FieldCursor.withCursor(over: bytes) { cursor throws(DecodeError) -> [UInt64] in
            var numbers: [UInt64] = []
            while let key = try cursor.nextKey(in: "event") {
                numbers.append(key.number)
                _ = try cursor.value(of: key, field: "event")
            }
            return numbers
        }
        #expect(numbers == [16, 3])
    }

    /// Each hostile input, the error it must give: kind, offset, detail.
    static let hostile: [(name: String, bytes: [UInt8], kind: DecodeError.Kind, offset: Int, detail: UInt64?)] = [
        ("a key cut off", [0x18, 0x01, 0x80], .truncated, 2, nil),
        ("a key of eleven bytes", [0x18, 0x01] + [UInt8](repeating: 0xFF, count: 10) + [0x01], .overlongVarint, 2, nil),
        ("a key past 64 bits", [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], .overlongVarint, 0, nil),
        ("field number 0", [0x00, 0x01], .invalidTag, 0, 0),
        ("a field number past 2^29 - 1", [0x80, 0x80, 0x80, 0x80, 0x20], .invalidTag, 0, UInt64(1) << 33),
        ("a group start", [0x18, 0x01, 0x0B], .invalidTag, 2, 0x0B),
        ("a group end", [0x0C], .invalidTag, 0, 0x0C),
        ("wire type 6", [0x0E, 0x00], .invalidTag, 0, 0x0E),
        ("wire type 7", [0x0F], .invalidTag, 0, 0x0F),
        ("a varint value cut off", [0x18, 0xFF, 0xFF], .truncated, 1, nil),
        ("a varint value of eleven bytes", [0x18] + [UInt8](repeating: 0x80, count: 10) + [0x00], .overlongVarint, 1, nil),
        ("a varint value with no bytes", [0x18], .truncated, 1, nil),
        ("a fixed64 cut off", [0x21, 1, 2, 3], .truncated, 1, 8),
        ("a fixed32 cut off", [0x1D, 1, 2], .truncated, 1, 4),
        ("a length past the end", [0x0A, 0x05, 0x41], .lengthPastEnd, 1, 5),
        ("a length of 2^64 - 1", [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], .lengthPastEnd, 1, .max),
        ("a length cut off", [0x0A, 0x80], .truncated, 1, nil),
        ("no length at all", [0x0A], .truncated, 1, nil),
    ]

    @Test(arguments: hostile.indices)
    func hostileBytesGiveTypedErrors(index: Int) {
        let (name, bytes, kind, offset, detail) = Self.hostile[index]
        let (_, error) = Self.walk(bytes)
        #expect(error?.kind == kind, "\(name)")
        #expect(error?.offset == offset, "\(name)")
        #expect(error?.field == "event", "\(name)")
        if let detail { #expect(error?.detail == detail, "\(name)") }
    }

    @Test func theWireTypeOfAKnownFieldIsReportedNotJudged() {
        // `event` (a string) as a varint: the cursor hands it out as it is; its users decide.
        let (fields, error) = Self.walk([0x08, 0x01])
        #expect(error == nil)
        #expect(fields.first?.eventField == .event)
        #expect(fields.first?.wireType == .varint)
    }

    @Test func everyPrefixOfAnEventEndsOrFailsWithoutReadingPastIt() throws {
        let bytes = try Fixtures.encode(Fixtures.reference)
        let whole = Self.walk(bytes).fields
        for length in 0..<bytes.count {
            let (fields, error) = Self.walk(Array(bytes.prefix(length)))
            // The fields found are the whole walk's first ones; a cut inside a field is an error, never a field.
            #expect(fields.map(\.range) == whole.prefix(fields.count).map(\.range))
            let endsOnAField = whole.contains { $0.range.upperBound == length } || length == 0
            #expect((error == nil) == endsOnAField, "prefix of \(length) bytes")
            if let error { #expect(error.offset <= length) }
        }
    }

    @Test func randomBytesNeverCrashAndStayInBounds() {
        var random = SplitMix64(seed: 28)
        for _ in 0..<5_000 {
            let bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let (fields, error) = Self.walk(bytes)
            var end = 0
            for field in fields {
                #expect(field.range.lowerBound == end)
                #expect(field.body.upperBound <= bytes.count)
                end = field.range.upperBound
            }
            if let error { #expect(error.offset >= end && error.offset <= bytes.count) } else { #expect(end == bytes.count) }
        }
    }
}
