import ArgumentParser
import SpoorModel
import SpoorWire
import SpoorLog

/// `spoor decode [FILE]`: a protobuf `spoor.v1.Batch`, or concatenated batch frames (recognised by their magic),
/// on stdin; JSON-lines events on stdout.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Protobuf Batch (or batch frames) on stdin -> JSON-lines events on stdout.",
        discussion: """
            The input is one protobuf spoor.v1.Batch, or one or more batch frames one after another (what \
            spoor encode --frames writes, a tracker's outbox files concatenated). The events before a \
            malformed one are printed, then the error, which names the frame's byte offset.
            Example: spoor decode < batch.pb > events.jsonl
            """
    )

    @Argument(help: ArgumentHelp("The file to read ('-' or none: standard input).", valueName: "file"), completion: .file())
    var file: String?

    func run() throws {
        let input = try CLI.readInput(file, command: "decode")
        guard BatchFrame.hasMagic(input) else { return try Self.decodeBatch(input) }
        var start = 0
        var index = 0
        while start < input.count {
            let end = Self.frameEnd(input, from: start)
            let frame: DecodedFrame
            do {
                frame = try FrameDecoder().decode(Array(input[start..<end]))
            } catch {
                // One frame keeps the message it always had; in a run of frames, say which one.
                let place = start == 0 && end == input.count ? "" : "frame \(index + 1) at byte \(start): "
                throw CLI.failure("spoor decode: frame: \(place)\(error)")
            }
            try Self.decodeBatch(frame.payload)
            start = end
            index += 1
        }
    }

    /// Where the frame starting at `start` ends, by its stored-length field; the frame decoder checks the
    /// rest (a damaged length fails the header checksum).
    static func frameEnd(_ input: [UInt8], from start: Int) -> Int {
        let header = BatchFrame.headerLength
        guard input.count - start >= header, BatchFrame.hasMagic(input[start...]) else { return input.count }
        let stored = (16..<20).reversed().reduce(0) { $0 << 8 | Int(input[start + $1]) }
        return min(input.count, start + header + stored)
    }

    /// Prints every event of a Batch; the events before a malformed one are printed, then the error.
    static func decodeBatch(_ bytes: [UInt8]) throws {
        let decoder = EventDecoder()
        var output = ""
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in
                try decoder.forEachEvent(inBatch: raw) { event in
                    output += EventJSON.encode(event)
                    output += "\n"
                }
            }
        }
        CLI.output(Array(output.utf8))
        if case .failure(let error) = result {
            throw CLI.failure("spoor decode: \(error)")
        }
    }
}
