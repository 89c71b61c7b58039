import SpoorCore
import SpoorSerializer
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
}
