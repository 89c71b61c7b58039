import ArgumentParser
import SpoorCore
import SpoorSerializer

/// `spoor encode`: JSON-lines events on stdin, a protobuf `spoor.v1.Batch` on stdout.
struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "JSON-lines events on stdin -> protobuf Batch on stdout.",
        discussion: "Example: spoor encode < events.jsonl > batch.pb"
    )

    func run() throws {
        let encoder = EventEncoder()
        var output: [UInt8] = []
        for (number, text) in CLI.lines(CLI.readStandardInput()) {
            if text.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            do {
                let event = try EventJSON.decode(text)
                try encoder.appendBatchEntry(event, to: &output)
            } catch {
                // Nothing is written unless every line encodes: a partial batch would hide the error.
                throw CLI.failure("line \(number): \(error)")
            }
        }
        CLI.output(output)
    }
}
