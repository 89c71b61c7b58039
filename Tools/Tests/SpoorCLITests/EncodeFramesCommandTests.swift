import Foundation
import Testing
import SpoorWire
import SpoorLog

/// `spoor encode --frames` writes the concatenated batch frames the tracker would seal; `spoor decode`
/// reads any run of frames.
@Suite("spoor encode --frames and decode of concatenated frames")
struct EncodeFramesCommandTests {
    /// 20 events in the decode shape, each different.
    static let input: String = (0..<20).map { index in
        #"{"event":"Step","type":"track","time":\#(1_767_225_600_000 + index),"track_id":"00000000000000\#(String(format: "%02x", index))","sequence":\#(index),"distinct_id":"u","anonymous_id":"a","lib":{"$lib":"Linux","$lib_version":"0.1.0","$lib_method":"code","$app_version":""},"properties":{"n":\#(index),"page":"home"}}"#
    }.joined(separator: "\n") + "\n"

    /// Splits concatenated frames by each header's stored length and decodes each with the frame decoder.
    static func frames(_ bytes: Data) throws -> [DecodedFrame] {
        let all = [UInt8](bytes)
        var frames: [DecodedFrame] = []
        var start = 0
        while start < all.count {
            let stored = (16..<20).reversed().reduce(0) { $0 << 8 | Int(all[start + $1]) }
            let end = start + BatchFrame.headerLength + stored
            try #require(end <= all.count)
            frames.append(try FrameDecoder().decode(Array(all[start..<end])))
            start = end
        }
        return frames
    }

    @Test(arguments: ["zstd", "gzip", "none"])
    func framesOfTheBatchSizeInTheCodecDecodeBackToTheInput(codec: String) async throws {
        let encoded = try await SpoorProcess.run(["encode", "--frames", "--batch-size", "7", "--codec", codec], input: Data(Self.input.utf8))
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let frames = try Self.frames(encoded.stdout)
        #expect(frames.map(\.header.recordCount) == [7, 7, 6])
        #expect(Set(frames.map(\.header.codec.description)) == [codec])
        #expect(Set(frames.map(\.header.batchID)).count == 3, "every frame has its own batch id")

        let decoded = try await SpoorProcess.run(["decode"], input: encoded.stdout)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdoutText == Self.input)
    }

    @Test func theDefaultIsOneZstdFrameOfUpToAHundredEvents() async throws {
        let encoded = try await SpoorProcess.run(["encode", "--frames"], input: Data(Self.input.utf8))
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let frames = try Self.frames(encoded.stdout)
        #expect(frames.map(\.header.recordCount) == [20])
        #expect(frames.first?.header.codec == .zstd)
        // The frame's payload is the Batch plain `spoor encode` writes, as the tracker seals it by default.
        let batch = try await SpoorProcess.run(["encode"], input: Data(Self.input.utf8))
        #expect(frames.first.map { Data($0.payload) } == batch.stdout)
        // The retired seal-time shared context is no option any more.
        let shared = try await SpoorProcess.run(["encode", "--frames", "--shared-context"], input: Data(Self.input.utf8))
        #expect(shared.status != 0)
        #expect(shared.stdout.isEmpty)
    }

    /// Frames the retired seal-time shared context wrote (docs/vectors/shared-*.spb) still decode to the same
    /// events as the plain ones.
    @Test(arguments: ["none", "gzip", "zstd"])
    func legacySharedContextFramesDecodeAsThePlainOnes(codec: String) async throws {
        let plain = try Data(contentsOf: SpoorProcess.root.appendingPathComponent("docs/vectors/\(codec).spb"))
        let shared = try Data(contentsOf: SpoorProcess.root.appendingPathComponent("docs/vectors/shared-\(codec).spb"))
        let fromPlain = try await SpoorProcess.run(["decode"], input: plain)
        let fromShared = try await SpoorProcess.run(["decode"], input: shared)
        #expect(fromShared.status == 0, "\(fromShared.stderr)")
        #expect(!fromPlain.stdoutText.isEmpty)
        #expect(fromShared.stdoutText == fromPlain.stdoutText)
    }

    @Test func theCommittedVectorsConcatenatedDecodeOneAfterAnother() async throws {
        var input = Data()
        var single: [String] = []
        for name in ["none", "gzip", "zstd"] {
            let frame = try Data(contentsOf: SpoorProcess.root.appendingPathComponent("docs/vectors/\(name).spb"))
            input.append(frame)
            single.append(try await SpoorProcess.run(["decode"], input: frame).stdoutText)
        }
        let decoded = try await SpoorProcess.run(["decode"], input: input)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdoutText == single.joined())
    }

    @Test func aDamagedFrameInARunIsNamedByItsOffsetAfterTheEventsBeforeIt() async throws {
        let encoded = try await SpoorProcess.run(["encode", "--frames", "--batch-size", "10"], input: Data(Self.input.utf8))
        var bytes = encoded.stdout
        let frames = try Self.frames(bytes)
        let secondStart = bytes.count - (BatchFrame.headerLength + Int(frames[1].header.storedLength))
        bytes[bytes.count - 3] ^= 0xFF
        let decoded = try await SpoorProcess.run(["decode"], input: bytes)
        #expect(decoded.status == 2)
        #expect(decoded.stderr.hasPrefix("spoor decode: frame: frame 2 at byte \(secondStart): "), "\(decoded.stderr)")
        #expect(decoded.stdoutText.split(separator: "\n").count == 10)

        // Bytes after the last whole frame are a truncated frame, named the same way.
        let tail = encoded.stdout + Data(BatchFrame.magic + [1, 2])
        let truncated = try await SpoorProcess.run(["decode"], input: tail)
        #expect(truncated.status == 2)
        #expect(truncated.stderr.hasPrefix("spoor decode: frame: frame 3 at byte \(encoded.stdout.count): truncated"), "\(truncated.stderr)")
        #expect(truncated.stdoutText == Self.input)
    }

    @Test(arguments: [["encode", "--codec", "gzip"], ["encode", "--batch-size", "5"], ["encode", "--frames", "--batch-size", "0"],
                      ["encode", "--frames", "--codec", "lzma"]])
    func frameOptionsAreCheckedAsUsage(_ arguments: [String]) async throws {
        let result = try await SpoorProcess.run(arguments, input: Data(Self.input.utf8))
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("spoor encode: "), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aFileArgumentReadsLikeStandardInput() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let events = directory.appendingPathComponent("events.jsonl"), frames = directory.appendingPathComponent("frames.spb")
        try Data(Self.input.utf8).write(to: events)
        let encoded = try await SpoorProcess.run(["encode", events.path, "--frames", "--codec", "gzip"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        try encoded.stdout.write(to: frames)
        let decoded = try await SpoorProcess.run(["decode", frames.path])
        #expect(decoded.stdoutText == Self.input)
        let missing = try await SpoorProcess.run(["decode", directory.appendingPathComponent("nope").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("spoor decode: cannot read "), "\(missing.stderr)")
    }
}
