import SpoorModel
import SpoorWire
import Testing

/// What a batch payload holds: its entries, how a context is told from an event, how it splits for a 413, and
/// that anything else is refused with a typed error.
@Suite struct BatchPayloadTests {
    static let lib = LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "1.2.3")

    /// A payload the way the log seals one: a context record, then `count` events that extend it.
    static func contextPayload(events count: Int) throws -> (payload: [UInt8], events: [Event]) {
        let encoder = EventEncoder()
        let base = Event(
            name: "", type: .unrecognized(0), time: 1_700_000_000_000, trackID: 0, sequence: 100, distinctID: "user-1",
            anonymousID: "anon-1", lib: LibInfo(lib: lib.lib, libVersion: lib.libVersion, method: .unspecified, appVersion: lib.appVersion),
            properties: [:], sessionID: "session-1")
        let shared: Properties = ["$os": "Linux", "$model": "x86_64"]
        var payload: [UInt8] = []
        try encoder.appendContextEntry(base, suffix: ContextRecord.propertyEntries(of: shared, using: encoder), to: &payload)
        var events: [Event] = []
        for index in 0..<count {
            let own = Event(name: "E\(index)", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .code),
                            properties: ["n": .int(Int64(index))])
            var suffix: [UInt8] = []
            ContextRecord.appendReference(
                time: base.time + Int64(index), sequence: base.sequence + UInt64(index), contextTime: base.time,
                contextSequence: base.sequence, to: &suffix)
            try encoder.appendBatchEntry(own, suffix: suffix, to: &payload)
            events.append(Event(
                name: "E\(index)", time: base.time + Int64(index), sequence: base.sequence + UInt64(index), distinctID: "user-1",
                anonymousID: "anon-1", lib: LibInfo(lib: lib.lib, libVersion: lib.libVersion, method: .code, appVersion: lib.appVersion),
                properties: shared.merging(["n": .int(Int64(index))]) { $1 }, sessionID: "session-1"))
        }
        return (payload, events)
    }

    @Test func readsEntriesAndTellsContextsFromEvents() throws {
        let (bytes, events) = try Self.contextPayload(events: 5)
        #expect(try EventDecoder().decodeBatch(bytes) == events)
        let payload = try BatchPayload(bytes)
        #expect(payload.entries.map(\.kind) == [.context, .event, .event, .event, .event, .event])
        #expect(payload.eventCount == 5)
        #expect(try BatchPayload.eventCount(bytes) == 5)
        #expect(payload.hasContexts)
        #expect(payload.entries.first?.range.lowerBound == 0)
        #expect(payload.entries.last?.range.upperBound == bytes.count)
        for entry in payload.entries {
            #expect(bytes[entry.range.lowerBound] == entry.kind.tag)
            #expect(entry.body.upperBound == entry.range.upperBound)
            // A log record is exactly one entry, of the same kind.
            let record = Array(bytes[entry.range])
            #expect(record.withUnsafeBytes { BatchPayload.kind(ofRecord: $0) } == entry.kind)
        }
        #expect(BatchPayload.Kind(tag: 0x0A) == .event)
        #expect(BatchPayload.Kind(tag: 0x12) == .context)
        #expect(BatchPayload.Kind(tag: 0x1A) == nil)
    }

    @Test func aPlainPayloadHoldsNoContexts() throws {
        var bytes: [UInt8] = []
        try EventEncoder().appendBatchEntry(Fixtures.reference, to: &bytes)
        let payload = try BatchPayload(bytes)
        #expect(!payload.hasContexts)
        #expect(payload.eventCount == 1)
        #expect(payload.halves() == nil)
        #expect(try BatchPayload([]).entries.isEmpty)
    }

    @Test func halvesKeepTheContextsAndTheEventsByteForByte() throws {
        let (bytes, events) = try Self.contextPayload(events: 7)
        let payload = try BatchPayload(bytes)
        let (first, second) = try #require(payload.halves())
        #expect(first.eventCount == 3)
        #expect(second.eventCount == 4)
        let context = payload.entries[0]
        for half in [first, second] {
            #expect(half.entries.first?.kind == .context)
            #expect(Array(half.bytes[half.entries[0].range]) == Array(bytes[context.range]))
            // What the half says of itself is what reading its bytes again finds.
            let again = try BatchPayload(half.bytes)
            #expect(again.entries == half.entries)
        }
        let decoder = EventDecoder()
        #expect(try decoder.decodeBatch(first.bytes) == Array(events[..<3]))
        #expect(try decoder.decodeBatch(second.bytes) == Array(events[3...]))
        // The events' own bytes are untouched.
        let eventBytes = payload.entries.filter { $0.kind == .event }.map { Array(bytes[$0.range]) }
        let halvesBytes = first.entries.filter { $0.kind == .event }.map { Array(first.bytes[$0.range]) }
            + second.entries.filter { $0.kind == .event }.map { Array(second.bytes[$0.range]) }
        #expect(halvesBytes == eventBytes)
    }

    @Test func contextsAfterTheEventsStillSplitIntoWholeEvents() throws {
        // Protobuf lets `contexts` come anywhere; the halves put them first, where Spoor writes them.
        let (bytes, events) = try Self.contextPayload(events: 4)
        let payload = try BatchPayload(bytes)
        let context = payload.entries[0]
        let moved = Array(bytes[context.range.upperBound...]) + Array(bytes[context.range])
        #expect(try EventDecoder().decodeBatch(moved) == events)
        let (first, second) = try #require(try BatchPayload(moved).halves())
        #expect(try EventDecoder().decodeBatch(first.bytes) + EventDecoder().decodeBatch(second.bytes) == events)
        #expect(first.entries.first?.kind == .context)
    }

    /// Payloads that are not a run of whole entries, and the start of the reason each must give.
    static let malformed: [(name: String, bytes: [UInt8], reason: String)] = [
        ("another field", [0x1A, 0x00], "byte 0 is not a Batch.events or Batch.contexts tag"),
        ("an event field as a varint", [0x08, 0x01], "byte 0 is not a Batch.events or Batch.contexts tag"),
        ("a key in two bytes", [0x8A, 0x00, 0x00], "byte 0 is not a Batch.events or Batch.contexts tag"),
        ("junk after an entry", [0x0A, 0x00, 0xFF], "byte 2 is not a Batch.events or Batch.contexts tag"),
        ("a length cut off", [0x0A, 0x80], "a record length at byte 1 is cut off or too long"),
        ("no length", [0x12], "a record length at byte 1 is cut off or too long"),
        ("a length of eleven bytes", [0x0A] + [UInt8](repeating: 0xFF, count: 10) + [0x01], "a record length at byte 1 is cut off"),
        ("a length past the end", [0x0A, 0x01, 0x00, 0x12, 0x09, 0x00], "the record whose length is at byte 4 runs past the payload"),
        ("a length of 2^64 - 1", [0x0A] + [UInt8](repeating: 0xFF, count: 9) + [0x01], "the record whose length is at byte 1 runs past"),
    ]

    @Test(arguments: malformed.indices)
    func malformedPayloadsAreRefusedWithTheirReason(index: Int) {
        let (name, bytes, reason) = Self.malformed[index]
        do {
            _ = try BatchPayload(bytes)
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.kind == .malformedPayload, "\(name)")
            #expect(error.field == "payload", "\(name)")
            #expect(error.reason.hasPrefix(reason), "\(name): \(error.reason)")
        }
        #expect(throws: FrameError.self, "\(name)") { try BatchPayload.eventCount(bytes) }
    }

    @Test func aRecordIsOneWholeEntryOrNothing() {
        func kind(_ bytes: [UInt8]) -> BatchPayload.Kind? { bytes.withUnsafeBytes { BatchPayload.kind(ofRecord: $0) } }
        #expect(kind([0x0A, 0x01, 0x10]) == .event)
        #expect(kind([0x12, 0x00]) == .context)
        #expect(kind([0x0A, 0x02, 0x10]) == nil)  // cut short
        #expect(kind([0x0A, 0x00, 0x00]) == nil)  // a byte too many
        #expect(kind([0x1A, 0x00]) == nil)  // another field
        #expect(kind([0x0A]) == nil)
        #expect(kind([]) == nil)
        #expect(kind([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]) == nil)  // an overlong length
    }

    @Test func randomPayloadsAreReadOrRefusedNeverCrash() throws {
        var random = SplitMix64(seed: 413)
        let (valid, _) = try Self.contextPayload(events: 3)
        for _ in 0..<3_000 {
            var bytes = valid
            for _ in 0..<Int(random.next() % 4) {
                let at = Int(random.next() % UInt64(bytes.count))
                bytes[at] = [0x00, 0x80, 0xFF, 0x0A, 0x12, 0x7F][Int(random.next() % 6)]
            }
            if random.next() % 3 == 0 { bytes.removeLast(Int(random.next() % UInt64(bytes.count))) }
            guard let payload = try? BatchPayload(bytes) else { continue }
            #expect(payload.entries.reduce(0) { $0 + $1.range.count } == bytes.count)
            if let (first, second) = payload.halves() {
                #expect(first.eventCount + second.eventCount == payload.eventCount)
            }
        }
    }
}
