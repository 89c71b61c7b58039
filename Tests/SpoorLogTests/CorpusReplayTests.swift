import Foundation
import SpoorWire
import Testing
import Logging
import SpoorLog
import SpoorTestSupport

/// Replays the fuzzers' committed corpora and past crashers (Fuzz/Corpus, Fuzz/FailCases)
/// through the same checks as the fuzz targets, without sanitizers, on every `make test`.
@Suite struct TransportCorpusReplayTests {
    static func inputs(_ target: String) -> [URL] {
        ["Corpus", "FailCases"].flatMap { folder -> [URL] in
            let directory = repositoryRoot.appendingPathComponent("Fuzz/\(folder)/\(target)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { !$0.hasSuffix(".md") }.sorted().map { directory.appendingPathComponent($0) }
        }
    }

    /// The same input mapping as FuzzFrameDecoder: inputs starting with 0xFF get a header made for them.
    static func frame(fromFuzzInput input: [UInt8]) -> [UInt8] {
        guard input.first == 0xFF, input.count >= 8 else { return input }
        let stored = Array(input[8...])
        let codec = input[1] % 3
        let declared = UInt32(input[2]) | UInt32(input[3]) << 8 | UInt32(input[4]) << 16 | UInt32(input[5]) << 24
        return forgeFrame(
            codec: codec, stored: stored, uncompressedLength: Int(codec == 0 ? UInt32(stored.count) : declared % (1 << 21)),
            recordCount: Int(UInt32(input[6]) | UInt32(input[7]) << 8), payloadCRC: codec == 0 ? CRC32C.checksum(stored) : 0,
            sealedAt: 0
        )
    }

    @Test func frameDecoderCorpus() throws {
        let inputs = Self.inputs("FuzzFrameDecoder")
        #expect(inputs.count >= 3)
        let decoder = FrameDecoder(limits: FrameLimits(maxFrameBytes: 1 << 20, maxUncompressedBytes: 1 << 20, maxRecords: 1000))
        var decoded = 0
        for url in inputs {
            let bytes = Self.frame(fromFuzzInput: [UInt8](try Data(contentsOf: url)))
            guard let frame = try? decoder.decode(bytes) else { continue }
            decoded += 1
            #expect(frame.payload.count == Int(frame.header.uncompressedLength), "\(url.lastPathComponent)")
            for codec in Set([frame.header.codec, .none]) {
                let again = try BatchFrame.encode(
                    payload: frame.payload, recordCount: Int(frame.header.recordCount), batchID: frame.header.batchID,
                    sealedAt: frame.header.sealedAt, codec: codec
                )
                #expect(try decoder.decode(again).payload == frame.payload, "\(url.lastPathComponent)")
            }
        }
        #expect(decoded >= 3)
    }

    @Test func logRecoveryCorpus() throws {
        let inputs = Self.inputs("FuzzLogRecovery")
        #expect(inputs.count >= 3)
        let header = SegmentFormat.header(id: 1)
        let entry: [UInt8] = [0x0A, 0x03, 0x0A, 0x01, 0x7A]
        let quiet = Logger(label: "replay") { _ in SwiftLogNoOpLogHandler() }
        let configuration = EventLog.Configuration(durability: .none, maxPendingBatches: 1000)
        func records(_ log: EventLog) -> [[UInt8]] {
            var out: [[UInt8]] = []
            log.forEachRecord { out.append($0) }
            return out
        }
        for url in inputs {
            let input = [UInt8](try Data(contentsOf: url))
            let file = (input.first.map { $0 & 1 == 0 } ?? true) ? header + input.dropFirst() : Array(input.dropFirst())
            let directory = TemporaryDirectory()
            writeBytes(file, to: directory.path + "/" + StorageLayout.segmentName(id: 1))
            let name = url.lastPathComponent
            let first: [[UInt8]]
            let counters: LogCounters
            do {
                let log = try EventLog(directory: directory.url, configuration: configuration, logger: quiet)
                first = records(log)
                counters = log.counters
                #expect(log.recordCount == first.count, "\(name)")
                log.close()
            }
            let log = try EventLog(directory: directory.url, configuration: configuration, logger: quiet)
            #expect(records(log) == first, "\(name)")
            #expect(log.counters.corrupt == counters.corrupt && log.counters.tornTails == counters.tornTails, "\(name)")
            var buffer = RecordBuffer()
            buffer.append(entry: entry)
            log.append(buffer)
            // Read back as itself, behind the context record in effect (which it does not use) if there is one.
            let after = records(log)
            #expect(after.count == first.count + 1 && after.last!.suffix(entry.count).elementsEqual(entry), "\(name)")
            #expect(after.dropLast() == first[...], "\(name)")
            var sealed = 0
            while let batch = try log.seal(maxRecords: 50, codec: .none) {
                sealed += Int(try FrameDecoder().decode(log.frame(of: batch.id)).header.recordCount)
            }
            #expect(sealed == first.count + 1, "\(name)")
            log.close()
        }
    }
}
