import Foundation
import Testing
import SpoorTestSupport
import SpoorModel
@_spi(Testing) import SpoorWire
import SpoorWorkload
import SpoorLog

/// The shared context of a batch (`Batch.contexts`): stored once, and every decoder sees whole events again.
@Suite struct SharedContextTests {
    static func plainPayload(_ events: [Event]) throws -> [UInt8] {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        for event in events { try encoder.appendBatchEntry(event, to: &payload) }
        return payload
    }

    static func contextCount(_ payload: [UInt8]) -> Int {
        var count = 0, index = 0
        while index < payload.count {
            if payload[index] == 0x12 { count += 1 }
            index += 1
            let length = Varint.read(payload, at: &index)!
            index += Int(length)
        }
        return count
    }

    @Test("realistic batches come back whole and smaller", arguments: Workload.Kind.allCases)
    func realisticBatchesRoundTrip(kind: Workload.Kind) throws {
        var workload = Workload(kind, seed: 77)
        let events = workload.events(600)
        var plainBytes = 0, sharedBytes = 0
        for size in [2, 7, 50, 100] {
            for start in stride(from: 0, to: events.count - size, by: size * 3) {
                let batch = Array(events[start..<start + size])
                let plain = try Self.plainPayload(batch)
                let shared = LegacySharedContext.factor(plain)
                #expect(Self.contextCount(shared) >= 1)
                #expect(try EventDecoder().decodeBatch(shared) == batch)
                plainBytes += plain.count
                sharedBytes += shared.count
            }
        }
        #expect(sharedBytes * 2 < plainBytes, "\(sharedBytes) bytes with contexts, \(plainBytes) without")
    }

    @Test func framesCarryContextsAndCountOnlyEvents() throws {
        var workload = Workload(.iPhoneApp, seed: 3)
        let events = workload.events(50)
        let payload = try Self.plainPayload(events)
        for codec in Codec.linked {
            let frame = try BatchFrame.encode(
                payload: LegacySharedContext.factor(payload), recordCount: 50, batchID: .random(), sealedAt: 1, codec: codec)
            let decoded = try FrameDecoder().decode(frame)
            #expect(decoded.header.recordCount == 50)
            #expect(Self.contextCount(decoded.payload) >= 1)
            #expect(try EventDecoder().decodeBatch(decoded.payload) == events)
            let plain = try BatchFrame.encode(
                payload: payload, recordCount: 50, batchID: .random(), sealedAt: 1, codec: codec)
            #expect(try FrameDecoder().decode(plain).payload == payload)
        }
    }

    /// A frame written before contexts existed (plain events) decodes as before: docs/vectors holds three,
    /// `FrameVectorTests` decodes them; here a sealed log batch round-trips both ways.
    @Test func plainAndSharedFramesDecodeToTheSameEvents() throws {
        let events = (0..<40).map { SequencedEvents.event($0) }
        let payload = try Self.plainPayload(events)
        let old = try BatchFrame.encode(payload: payload, recordCount: 40, batchID: .random(), sealedAt: 1, codec: .preferred)
        let new = try BatchFrame.encode(
            payload: LegacySharedContext.factor(payload), recordCount: 40, batchID: .random(), sealedAt: 1, codec: .preferred)
        let fromOld = try EventDecoder().decodeBatch(try FrameDecoder().decode(old).payload)
        let fromNew = try EventDecoder().decodeBatch(try FrameDecoder().decode(new).payload)
        #expect(fromOld == events)
        #expect(fromNew == events)
    }

    @Test func unknownEnumValuesSurviveAContext() throws {
        var events = (0..<5).map { SequencedEvents.event($0) }
        events[2].type = .unrecognized(99)
        events[3].lib.method = .unrecognized(7)
        let shared = LegacySharedContext.factor(try Self.plainPayload(events))
        #expect(Self.contextCount(shared) >= 1)
        let decoded = try EventDecoder().decodeBatch(shared)
        #expect(decoded == events)
        #expect(decoded[2].type == .unrecognized(99))
    }

    /// Offsets wrap: extreme times and sequences (and a missing time) come back exactly.
    @Test func extremeTimesAndSequencesComeBackExactly() throws {
        let times: [Int64] = [.max, .min, 0, -1, 1_700_000_000_000, .min + 1]
        let sequences: [UInt64] = [.max, 0, 1, .max - 1, 1 << 63, 42]
        let events = zip(times, sequences).enumerated().map { index, pair in
            var event = SequencedEvents.event(index)
            event.time = pair.0
            event.sequence = pair.1
            event.properties["zero"] = .double(-0.0)
            event.properties["edge"] = .int(index % 2 == 0 ? .min : .max)
            return event
        }
        let shared = LegacySharedContext.factor(try Self.plainPayload(events))
        #expect(Self.contextCount(shared) >= 1)
        let decoded = try EventDecoder().decodeBatch(shared)
        #expect(decoded == events)
        #expect(decoded.map(\.time) == times)
        #expect(decoded.map(\.sequence) == sequences)
        #expect(decoded.allSatisfy { $0.properties["zero"] == .double(-0.0) })
    }

    @Test func eventsThatCannotBeSplitExactlyAreKeptAsTheyAre() throws {
        let events = (0..<4).map { SequencedEvents.event($0) }
        var payload = try Self.plainPayload(events)
        // A fifth event whose property key appears twice ("last wins" in protobuf): left verbatim.
        var body = try EventEncoder().encode(events[0])
        body += [0x52, 0x07, 0x0A, 0x01, 0x6B, 0x12, 0x02, 0x10, 0x02]  // properties { key: "k" value { int_value: 1 } }
        body += [0x52, 0x07, 0x0A, 0x01, 0x6B, 0x12, 0x02, 0x10, 0x04]  // properties { key: "k" value { int_value: 2 } }
        EventEncoder.appendBatchEntryHeader(bodyLength: body.count, to: &payload)
        payload += body
        let shared = LegacySharedContext.factor(payload)
        #expect(shared.suffix(body.count) == body[...])
        let decoded = try EventDecoder().decodeBatch(shared)
        #expect(decoded.prefix(4) == events[...])
        #expect(decoded[4].properties["k"] == .int(2))
        // A payload that is not plain events is returned unchanged.
        #expect(LegacySharedContext.factor(shared) == shared)
        #expect(LegacySharedContext.factor([0x08, 0x01]) == [0x08, 0x01])
    }

    @Test func aReferenceOutsideTheBatchIsRefused() throws {
        let events = (0..<3).map { SequencedEvents.event($0) }
        let shared = LegacySharedContext.factor(try Self.plainPayload(events))
        // Drop the context entry: the events now refer to nothing.
        var index = 1
        let length = Varint.read(shared, at: &index)!
        let orphans = Array(shared[(index + Int(length))...])
        #expect(throws: DecodeError.self) { try EventDecoder().decodeBatch(orphans) }
        do {
            _ = try EventDecoder().decodeBatch(orphans)
        } catch {
            #expect(error.kind == .unknownContext)
            #expect(error.eventIndex == 0)
        }
        // One event alone cannot be made whole.
        var at = 1
        let eventLength = Varint.read(orphans, at: &at)!
        let lone = Array(orphans[at..<at + Int(eventLength)])
        #expect { try EventDecoder().decode(lone) } throws: { ($0 as? DecodeError)?.kind == .unknownContext }
    }

    /// The documented rule with Google's tools only: the context's bytes followed by the event's bytes parse
    /// (`protoc --decode`) as the merged event; adding the offsets gives the time and sequence recorded.
    @Test func stockProtocFollowingTheRuleSeesWholeEvents() async throws {
        var workload = Workload(.iPhoneApp, seed: 5)
        let events = workload.events(12)
        let shared = LegacySharedContext.factor(try Self.plainPayload(events))
        var contexts: [ArraySlice<UInt8>] = [], entries: [ArraySlice<UInt8>] = []
        var index = 0
        while index < shared.count {
            let tag = shared[index]
            index += 1
            let length = Int(Varint.read(shared, at: &index)!)
            (tag == 0x12 ? { contexts.append(shared[index..<index + length]) } : { entries.append(shared[index..<index + length]) })()
            index += length
        }
        #expect(entries.count == events.count)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-rule-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (position, (entry, event)) in zip(entries, events).enumerated() {
            let file = directory.appendingPathComponent("\(position).bin")
            var reference = entry.startIndex
            var context: UInt64 = 0
            while reference < entry.endIndex {  // the event's `context` field, as any reader would find it
                let key = Varint.read(entry, at: &reference)!
                switch key & 7 {
                case 0:
                    let value = Varint.read(entry, at: &reference)!
                    if key >> 3 == 13 { context = value }
                case 1: reference += 8
                case 5: reference += 4
                default: reference += Int(Varint.read(entry, at: &reference)!)
                }
            }
            try #require(context >= 1)
            try Data(contexts[Int(context) - 1] + entry).write(to: file)
            let text = try await Shell.run(
                "protoc --decode=spoor.v1.Event --proto_path=\(repositoryRoot.path.quoted)/proto spoor/v1/event.proto < \(file.path.quoted)")
            func value(_ field: String) -> Int64 {
                text.split(separator: "\n").first { $0.hasPrefix("\(field): ") }.flatMap { Int64($0.dropFirst(field.count + 2)) } ?? 0
            }
            #expect(value("time") + value("time_offset") == event.time)
            #expect(value("sequence") + value("sequence_offset") == Int64(event.sequence))
            #expect(text.contains("anonymous_id: \"\(event.anonymousID)\""))
            #expect(text.contains("event: \"\(event.name)\""))
            #expect(text.components(separatedBy: "properties {").count - 1 == event.properties.count)
            for key in event.properties.keys { #expect(text.contains("key: \"\(key)\""), "\(key) missing in event \(position)") }
        }
    }
}
