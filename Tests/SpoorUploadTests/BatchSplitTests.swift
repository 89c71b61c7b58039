import Foundation
import SpoorModel
import SpoorWire
import SpoorTestSupport
import Testing
import SpoorLog
import SpoorUpload

/// A 413 split of a batch sealed from the log: each half carries the parent's context record and its own events,
/// byte for byte.
@Suite struct BatchSplitTests {
    @Test(arguments: Codec.linked)
    func aContextRecordBatchSplitsIntoHalvesThatCarryItsContext(codec: Codec) throws {
        let directory = TemporaryDirectory()
        let log = try EventLog(directory: directory.url, configuration: .init(durability: .none))
        log.append(try ContextRuns.buffer([("ann", 0..<7)]))
        let parent = try #require(try log.seal(maxRecords: 100, codec: codec))
        let frame = try FrameDecoder().decode(try log.frame(of: parent.id))
        let whole = try BatchPayload(frame.payload)
        #expect(whole.entries.first?.kind == .context)

        let halves = try #require(try BatchSplit.halves(of: try log.frame(of: parent.id)))
        let decoded = try halves.map { try FrameDecoder().decode($0) }
        #expect(decoded.map(\.header.recordCount) == [3, 4])
        #expect(decoded.map(\.header.batchID) == [parent.id.derived(index: 0), parent.id.derived(index: 1)])
        #expect(decoded.allSatisfy { $0.header.codec == codec && $0.header.sealedAt == frame.header.sealedAt })
        let parentEvents = try EventDecoder().decodeBatch(frame.payload)
        #expect(try decoded.flatMap { try EventDecoder().decodeBatch($0.payload) } == parentEvents)
        // Each half: the parent's context entry, then its events' entries, exactly as the parent holds them.
        let context = Array(frame.payload[whole.entries[0].range])
        let events = whole.entries.filter { $0.kind == .event }.map { Array(frame.payload[$0.range]) }
        #expect(decoded[0].payload == context + events[..<3].flatMap { $0 })
        #expect(decoded[1].payload == context + events[3...].flatMap { $0 })
    }

    @Test func aBatchWhoseEventsDoNotDecodeIsNotSplit() throws {
        // Two events that refer to a context the batch does not hold: well framed, but not events.
        var payload: [UInt8] = []
        let encoder = EventEncoder()
        for sequence in 0..<2 { try encoder.appendBatchEntry(ContextRuns.own(sequence), suffix: ContextRuns.reference, to: &payload) }
        let frame = try BatchFrame.encode(payload: payload, recordCount: 2, batchID: .random(), sealedAt: 1, codec: .none)
        do {
            _ = try BatchSplit.halves(of: frame)
            Issue.record("split a batch whose events do not decode")
        } catch {
            #expect(error.kind == .malformedPayload)
            #expect(error.reason.contains("context 1 is not in the batch"), "\(error.reason)")
        }
    }
}
