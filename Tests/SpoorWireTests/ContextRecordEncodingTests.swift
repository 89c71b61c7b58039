import SpoorModel
import SpoorWire
import Testing

/// The references of event records to their context record, byte for byte.
@Suite struct ContextRecordEncodingTests {
    @Test func aReferenceIsTheContextThenTheOffsetsLeftOutAtZero() {
        var suffix: [UInt8] = []
        ContextRecord.appendReference(timeOffset: 0, sequenceOffset: 0, to: &suffix)
        #expect(suffix == [0x68, 0x01])
        suffix.removeAll()
        ContextRecord.appendReference(timeOffset: -1, sequenceOffset: 64, to: &suffix)
        #expect(suffix == [0x68, 0x01, 0x70, 0x01, 0x78, 0x80, 0x01])
        suffix.removeAll()
        // Differences wrap, as the merge rule adds them back.
        ContextRecord.appendReference(time: 10, sequence: 0, contextTime: 12, contextSequence: 1, to: &suffix)
        #expect(suffix == [0x68, 0x01, 0x70, 0x03, 0x78, 0x01])
    }

    @Test func anEventOverItsContextDecodesWhole() throws {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        let context = Event(name: "", type: .unrecognized(0), time: 1_000, sequence: 5, distinctID: "d", anonymousID: "a",
                            lib: LibInfo(lib: "L", libVersion: "1", method: .unspecified), properties: [:])
        try encoder.appendContextEntry(context, suffix: ContextRecord.propertyEntries(of: ["$os": "Linux"], using: encoder), to: &payload)
        var suffix: [UInt8] = []
        ContextRecord.appendReference(time: 990, sequence: 9, contextTime: 1_000, contextSequence: 5, to: &suffix)
        let own = Event(name: "E", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .code),
                        properties: ["k": 1])
        try encoder.appendBatchEntry(own, suffix: suffix, to: &payload)
        let whole = Event(name: "E", time: 990, sequence: 9, distinctID: "d", anonymousID: "a",
                          lib: LibInfo(lib: "L", libVersion: "1", method: .code), properties: ["$os": "Linux", "k": 1])
        #expect(try EventDecoder().decodeBatch(payload) == [whole])
    }

    @Test func propertyEntriesAreTheMapEntriesOnly() throws {
        let encoder = EventEncoder()
        let entries = try ContextRecord.propertyEntries(of: ["a": "x", "b": 2], using: encoder)
        let fields = FieldCursorTests.walk(entries)
        #expect(fields.error == nil)
        #expect(fields.fields.count == 2)
        #expect(fields.fields.allSatisfy { $0.eventField == .properties && $0.wireType == .lengthDelimited })
        #expect(try ContextRecord.propertyEntries(of: [:], using: encoder).isEmpty)
    }
}
