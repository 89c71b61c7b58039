import SpoorCore
import SpoorSerializer

/// `spoor encode`: JSON-lines events on stdin, a protobuf `spoor.v1.Batch` on stdout.
enum EncodeCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.isEmpty else { return CLI.fail("usage: spoor encode < events.jsonl > batch.pb", status: 64) }
        let encoder = EventEncoder()
        var output: [UInt8] = []
        for (number, text) in CLI.lines(CLI.readStandardInput()) {
            if text.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            do {
                let event = try EventJSON.decode(text)
                try encoder.appendBatchEntry(event, to: &output)
            } catch {
                // Nothing is written unless every line encodes: a partial batch would hide the error.
                return CLI.fail("line \(number): \(error)")
            }
        }
        CLI.output(output)
        return 0
    }
}
