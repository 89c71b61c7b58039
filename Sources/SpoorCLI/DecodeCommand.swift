import SpoorCore
import SpoorSerializer
import SpoorTransport

/// `spoor decode`: a protobuf `spoor.v1.Batch`, or a batch frame (recognised by its magic), on stdin;
/// JSON-lines events on stdout.
enum DecodeCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.isEmpty else { return CLI.fail("usage: spoor decode < batch.pb > events.jsonl", status: 64) }
        let input = CLI.readStandardInput()
        guard BatchFrame.hasMagic(input) else { return decodeBatch(input) }
        do {
            let frame = try FrameDecoder().decode(input)
            return decodeBatch(frame.payload)
        } catch {
            return CLI.fail("decode: frame: \(error)")
        }
    }

    /// Prints every event of a Batch; the events before a malformed one are printed, then the error.
    static func decodeBatch(_ bytes: [UInt8]) -> Int32 {
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
            return CLI.fail("decode: \(error)")
        }
        return 0
    }
}
