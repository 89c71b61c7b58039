import ArgumentParser
import SpoorCore
import SpoorSerializer
import SpoorTransport

/// `spoor decode`: a protobuf `spoor.v1.Batch`, or a batch frame (recognised by its magic), on stdin;
/// JSON-lines events on stdout.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Protobuf Batch (or batch frame) on stdin -> JSON-lines events on stdout.",
        discussion: "Example: spoor decode < batch.pb > events.jsonl"
    )

    func run() throws {
        let input = CLI.readStandardInput()
        guard BatchFrame.hasMagic(input) else { return try Self.decodeBatch(input) }
        let frame: DecodedFrame
        do {
            frame = try FrameDecoder().decode(input)
        } catch {
            throw CLI.failure("decode: frame: \(error)")
        }
        try Self.decodeBatch(frame.payload)
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
            throw CLI.failure("decode: \(error)")
        }
    }
}
