import Foundation
import Testing
import SpoorModel
@_spi(Testing) import SpoorWire
import SpoorLog
import SpoorTestSupport

/// The committed test vectors in docs/vectors (see docs/frame-format.md).
///
/// `SPOOR_WRITE_VECTORS=1 swift test --filter FrameVectorTests` rewrites them; either way the tests check the
/// committed files against the writer and the format.
@Suite struct FrameVectorTests {
    static let directory = repositoryRoot.appendingPathComponent("docs/vectors")
    static let batchID = BatchID(hex: "00112233-4455-6677-8899-aabbccddeeff")!
    static let sealedAt: Int64 = 1_700_000_000_000

    /// Three events with at most one property each, so their encoding does not depend on map order.
    static let events: [Event] = {
        let lib = LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.4.1")
        return [
            Event(name: "$AppStart", time: 1_700_000_000_001, trackID: 0x0102_0304_0506_0708, sequence: 1, distinctID: "anon-7",
                  anonymousID: "anon-7", lib: lib, properties: ["$is_first_time": .bool(true)]),
            Event(name: "ViewProduct", time: 1_700_000_000_002, trackID: 0x1112_1314_1516_1718, sequence: 2, distinctID: "anon-7",
                  anonymousID: "anon-7", lib: lib, properties: ["price": .double(19.99)], sessionID: "s-1"),
            Event(name: "", type: .profileSet, time: 1_700_000_000_003, trackID: 0x2122_2324_2526_2728, sequence: 3, distinctID: "u-42",
                  anonymousID: "anon-7", loginID: "u-42", lib: lib, properties: ["tags": .list(["a", "b"])]),
        ]
    }()

    static func payload() throws -> [UInt8] {
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        for event in events { try encoder.appendBatchEntry(event, to: &payload) }
        return payload
    }

    static func file(_ codec: Codec) -> URL { directory.appendingPathComponent("\(codec).spb") }
    /// The same events in a frame with a shared context (`Batch.contexts`).
    static func sharedFile(_ codec: Codec) -> URL { directory.appendingPathComponent("shared-\(codec).spb") }

    struct Expected: Codable, Equatable {
        var file: String
        var codec: String
        var record_count: Int
        var uncompressed_length: Int
        var stored_length: Int
        var payload_crc32c: String
        var batch_id: String
        var sealed_at: Int64
    }

    /// The frames and the index the writer makes today: file name → bytes, and `vectors.json`'s entries.
    static func vectors() throws -> (files: [(url: URL, bytes: [UInt8])], expected: [Expected]) {
        let payload = try Self.payload()
        var files: [(url: URL, bytes: [UInt8])] = []
        var expected: [Expected] = []
        for codec in Codec.allCases {
            // Plain events, as every frame was written before shared contexts; the shared-context vectors follow.
            let frame = try BatchFrame.encode(
                payload: payload, recordCount: 3, batchID: Self.batchID, sealedAt: Self.sealedAt, codec: codec)
            let shared = try BatchFrame.encode(
                payload: LegacySharedContext.factor(payload), recordCount: 3, batchID: Self.batchID, sealedAt: Self.sealedAt,
                codec: codec)
            files += [(Self.file(codec), frame), (Self.sharedFile(codec), shared)]
            let header = try FrameDecoder().decodeHeader(frame)
            expected.append(Expected(
                file: "\(codec).spb", codec: "\(codec)", record_count: 3, uncompressed_length: Int(header.uncompressedLength),
                stored_length: Int(header.storedLength), payload_crc32c: String(format: "%08x", header.payloadCRC),
                batch_id: Self.batchID.description, sealed_at: Self.sealedAt
            ))
        }
        return (files, expected)
    }

    /// The committed vectors are what the writer makes of the same events today. `SPOOR_WRITE_VECTORS=1` writes
    /// them first (after a format change); the checks run either way.
    ///
    /// Uncompressed frames must match byte for byte. A compressed frame's bytes depend on the zstd or zlib
    /// release, so for those the header (all but the stored length) and the payload inside must match, and the
    /// index's stored length must be the committed file's.
    @Test(zstdLinked) func theCommittedVectorsAreWhatTheWriterWrites() throws {
        let (files, expected) = try Self.vectors()
        if ProcessInfo.processInfo.environment["SPOOR_WRITE_VECTORS"] == "1" {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            for (url, bytes) in files { try Data(bytes).write(to: url) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try (encoder.encode(expected) + Data("\n".utf8)).write(to: Self.directory.appendingPathComponent("vectors.json"))
        }
        for (url, made) in files {
            let committed = [UInt8](try Data(contentsOf: url))
            let madeFrame = try FrameDecoder().decode(made), committedFrame = try FrameDecoder().decode(committed)
            if madeFrame.header.codec == .none {
                #expect(committed == made, "\(url.lastPathComponent)")
            }
            var header = committedFrame.header
            header.storedLength = madeFrame.header.storedLength
            #expect(header == madeFrame.header, "\(url.lastPathComponent)")
            #expect(committedFrame.payload == madeFrame.payload, "\(url.lastPathComponent)")
        }
        var index = try JSONDecoder().decode([Expected].self, from: Data(contentsOf: Self.directory.appendingPathComponent("vectors.json")))
        for position in index.indices {
            let size = try Data(contentsOf: Self.directory.appendingPathComponent(index[position].file)).count
            #expect(index[position].stored_length == size - BatchFrame.headerLength, "\(index[position].file)")
            if index[position].codec != "none" { index[position].stored_length = expected[position].stored_length }
        }
        #expect(index == expected)
    }

    @Test func everyVectorDecodesToTheDocumentedValues() throws {
        let expected = try JSONDecoder().decode([Expected].self, from: Data(contentsOf: Self.directory.appendingPathComponent("vectors.json")))
        #expect(expected.map(\.codec) == Codec.allCases.map(\.description))
        for vector in expected {
            let bytes = [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(vector.file)))
            if !Codec.linked.map(\.description).contains(vector.codec) {
                // A build without zstd (Apple platforms) refuses the zstd vector with the typed error, nothing else.
                do {
                    _ = try FrameDecoder().decode(bytes)
                    Issue.record("\(vector.file) decoded in a build without its codec")
                } catch {
                    #expect(error.kind == .codecUnavailable)
                }
                continue
            }
            let frame = try FrameDecoder().decode(bytes)
            #expect(frame.header.codec.description == vector.codec)
            #expect(Int(frame.header.recordCount) == vector.record_count)
            #expect(Int(frame.header.uncompressedLength) == vector.uncompressed_length)
            #expect(Int(frame.header.storedLength) == vector.stored_length)
            #expect(String(format: "%08x", frame.header.payloadCRC) == vector.payload_crc32c)
            #expect(frame.header.batchID.description == vector.batch_id)
            #expect(frame.header.sealedAt == vector.sealed_at)
            #expect(try EventDecoder().decodeBatch(frame.payload) == Self.events)
        }
    }

    @Test func theUncompressedVectorIsExactlyWhatTheEncoderWrites() throws {
        let committed = [UInt8](try Data(contentsOf: Self.file(.none)))
        let payload = try Self.payload()
        // These vectors were written before shared contexts: plain events.
        let frame = try BatchFrame.encode(
            payload: payload, recordCount: 3, batchID: Self.batchID, sealedAt: Self.sealedAt, codec: .none)
        #expect(frame == committed)
        #expect(committed.count == BatchFrame.headerLength + payload.count)
    }

    /// Frames with a shared context: the same three events, and the same header except the payload.
    @Test(arguments: Codec.linked)
    func sharedContextVectorsDecodeToTheSameEvents(codec: Codec) async throws {
        let frame = try FrameDecoder().decode([UInt8](try Data(contentsOf: Self.sharedFile(codec))))
        #expect(frame.header.recordCount == 3)
        #expect(frame.header.batchID == Self.batchID)
        #expect(frame.payload.first == 0x12)  // a `Batch.contexts` entry leads
        #expect(try EventDecoder().decodeBatch(frame.payload) == Self.events)
        let text = try await Shell.run(
            "tail -c +\(BatchFrame.headerLength + 1) \(Self.sharedFile(codec).path.quoted) | \(["none": "cat", "gzip": "gzip -dc", "zstd": "zstd -dcq"]["\(codec)"]!) | "
                + "protoc --decode=spoor.v1.Batch --proto_path=\(repositoryRoot.path.quoted)/proto spoor/v1/event.proto")
        #expect(text.contains("contexts {"))
        #expect(text.components(separatedBy: "events {").count - 1 == 3)
        #expect(text.contains("context: 1"))
    }

    /// The frame's promise: a stock `zstd`/`gzip` and `protoc --decode` recover every event, no Spoor code involved.
    @Test(arguments: Codec.allCases)
    func stockToolsRecoverEveryEventOfAVector(codec: Codec) async throws {
        let decompress = ["none": "cat", "gzip": "gzip -dc", "zstd": "zstd -dcq"]["\(codec)"]!
        let text = try await Shell.run(
            "tail -c +\(BatchFrame.headerLength + 1) \(Self.file(codec).path.quoted) | \(decompress) | "
                + "protoc --decode=spoor.v1.Batch --proto_path=\(repositoryRoot.path.quoted)/proto spoor/v1/event.proto"
        )
        #expect(text.components(separatedBy: "events {").count - 1 == 3)
        for event in Self.events {
            #expect(text.contains("sequence: \(event.sequence)\n"))
            #expect(text.contains("time: \(event.time)\n"))
            #expect(text.contains("distinct_id: \"\(event.distinctID)\""))
        }
        #expect(text.contains("event: \"ViewProduct\""))
        #expect(text.contains("double_value: 19.99"))
        #expect(text.contains("type: EVENT_TYPE_PROFILE_SET"))
        #expect(text.contains("login_id: \"u-42\""))
    }

    @Test(arguments: Codec.linkedCompressors)
    func stockToolsRecoverEveryEventOfASealedBatch(codec: Codec) async throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        log.append(Fixtures.buffer(500..<600))
        let batch = try #require(try log.seal(codec: codec))
        let path = directory.path + "/frame.spb"
        writeBytes(try log.frame(of: batch.id), to: path)
        let decompress = codec == .gzip ? "gzip -dc" : "zstd -dcq"
        let text = try await Shell.run(
            "tail -c +53 \(path.quoted) | \(decompress) | "
                + "protoc --decode=spoor.v1.Batch --proto_path=\(repositoryRoot.path.quoted)/proto spoor/v1/event.proto"
        )
        #expect(text.components(separatedBy: "events {").count - 1 == 100)
        // The documented rule, on protoc's text: sequence = (context's, else own) sequence + sequence_offset.
        #expect(Self.sequences(inBatchText: text) == Array(500..<600))
    }

    /// Each event's sequence from `protoc --decode=spoor.v1.Batch` text, following the `Batch` rule.
    static func sequences(inBatchText text: String) -> [Int64] {
        var contexts: [[String: Int64]] = [], events: [[String: Int64]] = []
        var block: [String: Int64] = [:]
        var isContext = false
        for line in text.split(separator: "\n") {
            if line == "contexts {" || line == "events {" {
                isContext = line == "contexts {"
                block = [:]
            } else if line == "}" {
                if isContext { contexts.append(block) } else { events.append(block) }
            } else if line.hasPrefix("  "), !line.hasPrefix("   "), let colon = line.firstIndex(of: ":"),
                let value = Int64(line[line.index(colon, offsetBy: 2)...])
            {
                block[String(line.dropFirst(2).prefix(upTo: colon))] = value
            }
        }
        return events.map { event in
            let context = (event["context"]).map { contexts[Int($0) - 1] } ?? [:]
            return (event["sequence"] ?? context["sequence"] ?? 0) + (event["sequence_offset"] ?? 0)
        }
    }
}
