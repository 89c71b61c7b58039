import ArgumentParser
import Foundation
import SpoorModel
import SpoorWire

/// `spoor-collector frame`: seals `spoor decode` JSON lines into one batch frame, for curl and demos.
struct FrameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frame", abstract: "Seals JSON event lines from standard input into one batch frame on standard output."
    )

    @Option(help: "The codec: none, gzip or zstd.")
    var codec = "zstd"

    func run() throws {
        guard let codec = Codec(name: codec) else { throw ValidationError("unknown codec \(codec)") }
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        var count = 0
        while let line = readLine(), !line.isEmpty {
            try encoder.appendBatchEntry(EventJSON.decode(line), to: &payload)
            count += 1
        }
        let frame = try BatchFrame.encode(payload: payload, recordCount: count, batchID: .random(),
                                          sealedAt: Int64(Date().timeIntervalSince1970 * 1000), codec: codec)
        FileHandle.standardOutput.write(Data(frame))
    }
}
