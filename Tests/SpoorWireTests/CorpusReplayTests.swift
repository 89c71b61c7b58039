import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire
import Testing

/// Replays the committed fuzz corpus of `FuzzEventDecoder` (and the inputs that once crashed it)
/// through the decoder without sanitizers: every input must decode or throw a `DecodeError`,
/// and whatever decodes must survive an encode-and-decode round trip unchanged.
@Suite struct CorpusReplayTests {
    /// The repository's root: this file is Tests/SpoorWireTests/CorpusReplayTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The input files of one folder under Fuzz/, in name order (README files excluded).
    static func inputs(in folder: String) throws -> [URL] {
        let directory = root.appendingPathComponent("Fuzz/\(folder)/FuzzEventDecoder")
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix("README") && !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// What the hand-built malformed seeds (written by Fuzz/Sources/FuzzSeeds) are about.
    static let edgeKinds: [String: DecodeError.Kind] = [
        "seed-edge-empty": .invalidEnum, // no type
        "seed-edge-wrong-wire-type": .wrongWireType,
        "seed-edge-overlong-varint": .overlongVarint,
        "seed-edge-varint-over-64-bits": .overlongVarint,
        "seed-edge-length-past-end": .lengthPastEnd,
        "seed-edge-huge-length": .lengthPastEnd,
        "seed-edge-invalid-utf8": .invalidUTF8,
        "seed-edge-utf8-surrogate": .invalidUTF8,
        "seed-edge-embedded-nul": .embeddedNUL,
        "seed-edge-nan": .nonFiniteDouble,
        "seed-edge-missing-value": .missingValue,
        "seed-edge-empty-value": .missingValue,
        "seed-edge-invalid-type": .invalidEnum,
        "seed-edge-missing-type": .invalidEnum,
        "seed-edge-invalid-method": .invalidEnum,
        "seed-edge-group-wire-type": .invalidTag,
        "seed-edge-field-zero": .invalidTag,
        "seed-edge-truncated-fixed64": .truncated,
    ]

    /// Decodes `bytes` as an event and as a batch and checks both round trips.
    /// Returns the single-event outcome for the callers' own expectations.
    @discardableResult
    static func replay(_ bytes: [UInt8], name: String) -> Result<Event, DecodeError> {
        let decoder = EventDecoder()
        let encoder = EventEncoder()
        let single = Result { () throws(DecodeError) in try decoder.decode(bytes) }
        if case .success(let event) = single {
            #expect(throws: Never.self, "\(name): re-encoding") {
                let again = try decoder.decode(try encoder.encode(event))
                #expect(again == event, "\(name): the round trip changed the event")
            }
        }
        // The decoder's shortcut for events over a context decoded once agrees with merging their bytes.
        let merging = EventDecoder()
        merging.alwaysMergesBytes = true
        let fast = Result { () throws(DecodeError) in try decoder.decodeBatch(bytes) }
        let reference = Result { () throws(DecodeError) in try merging.decodeBatch(bytes) }
        #expect(fast == reference, "\(name): decoding over a context differs from merging bytes")
        if let events = try? decoder.decodeBatch(bytes) {
            #expect(throws: Never.self, "\(name): re-encoding the batch") {
                var batch: [UInt8] = []
                for event in events { try encoder.appendBatchEntry(event, to: &batch) }
                #expect(try decoder.decodeBatch(batch) == events, "\(name): the round trip changed the batch")
            }
        }
        return single
    }

    @Test func corpusIsNotEmpty() throws {
        let names = try Self.inputs(in: "Corpus").map(\.lastPathComponent)
        #expect(names.contains { $0.hasPrefix("seed-valid-") })
        #expect(names.contains { $0.hasPrefix("seed-edge-") })
        #expect(Set(Self.edgeKinds.keys).isSubset(of: names))
    }

    @Test func corpusAndFailCasesDecodeOrThrowTypedErrors() throws {
        let files = try Self.inputs(in: "Corpus") + Self.inputs(in: "FailCases")
        #expect(files.count > Self.edgeKinds.count)
        for file in files {
            let name = file.lastPathComponent
            let outcome = Self.replay(Array(try Data(contentsOf: file)), name: name)
            if name.hasPrefix("seed-valid-"), case .failure(let error) = outcome {
                if !name.hasPrefix("seed-valid-batch") {
                    Issue.record("\(name) is a valid event but failed: \(error)")
                }
            }
            if name.hasPrefix("seed-edge-"), case .success = outcome {
                Issue.record("\(name) is malformed but decoded")
            }
            if let kind = Self.edgeKinds[name], case .failure(let error) = outcome {
                #expect(error.kind == kind, "\(name): \(error)")
            }
        }
    }

    @Test func validBatchSeedsDecodeAsBatches() throws {
        let batches = try Self.inputs(in: "Corpus").filter { $0.lastPathComponent.hasPrefix("seed-valid-batch") }
        #expect(!batches.isEmpty)
        for file in batches {
            let events = try EventDecoder().decodeBatch(Array(try Data(contentsOf: file)))
            #expect(!events.isEmpty, "\(file.lastPathComponent)")
        }
    }

    @Test func malformedBatchSeedsThrow() throws {
        let batches = try Self.inputs(in: "Corpus").filter { $0.lastPathComponent.hasPrefix("seed-edge-batch") }
        #expect(!batches.isEmpty)
        for file in batches {
            #expect(throws: DecodeError.self, "\(file.lastPathComponent)") {
                try EventDecoder().decodeBatch(Array(try Data(contentsOf: file)))
            }
        }
    }
}
