import ArgumentParser
import Foundation
import SpoorTooling
import SpoorModel
import SpoorWire
import SpoorLog

/// `spoor encode [FILE] [--frames [--batch-size N] [--codec zstd|gzip|none]]`: JSON-lines events on stdin; on
/// stdout a protobuf `spoor.v1.Batch`, or with `--frames` the concatenated batch frames the tracker would
/// seal from those events.
struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "JSON-lines events on stdin -> protobuf Batch (or batch frames) on stdout.",
        discussion: """
            Without --frames the output is one protobuf spoor.v1.Batch. With --frames it is what the tracker \
            would upload: the events cut into batches of --batch-size (and at most 512 KiB of records), each \
            sealed into a batch frame with the codec, the frames concatenated (each event whole: the tracker's \
            frames also carry the context record their events extend, which a file of JSON events does not have). spoor decode reads either and prints whole events.
            Examples:
              spoor encode < events.jsonl > batch.pb
              spoor encode --frames --batch-size 50 --codec gzip < events.jsonl | wc -c
            """
    )

    /// What `EventLog.seal` takes by default: a batch never holds more record bytes than this.
    static let maxBatchBytes = 512 << 10

    @Argument(help: ArgumentHelp("The JSON-lines file to read ('-' or none: standard input).", valueName: "file"), completion: .file())
    var file: String?

    @Flag(help: "Write concatenated batch frames instead of one Batch.")
    var frames = false

    @Option(help: ArgumentHelp("With --frames, the most events per frame (the tracker's flushBulkSize).", valueName: "n"))
    var batchSize: Int?

    @Option(help: ArgumentHelp("With --frames, the frame codec: zstd, gzip or none.", valueName: "codec"))
    var codec: FrameCodec?

    func validate() throws {
        if !frames, batchSize != nil || codec != nil {
            throw ValidationError("--batch-size and --codec need --frames")
        }
        if let batchSize, batchSize < 1 || batchSize > FrameLimits().maxRecords {
            throw ValidationError("--batch-size must be between 1 and \(FrameLimits().maxRecords)")
        }
    }

    func run() throws {
        let batchSize = self.batchSize ?? 100
        let codec = (self.codec ?? .zstd).codec
        let encoder = EventEncoder()
        var output: [UInt8] = []
        var batch: [UInt8] = []
        var records = 0
        let sealedAt = Int64(Date().timeIntervalSince1970 * 1000)

        func seal() throws {
            guard records > 0 else { return }
            do {
                output += try BatchFrame.encode(
                    payload: batch, recordCount: records, batchID: .random(), sealedAt: sealedAt, codec: codec)
            } catch {
                throw CLI.failure("spoor encode: frame: \(error)", status: 1)
            }
            batch.removeAll(keepingCapacity: true)
            records = 0
        }

        for (number, text) in CLI.lines(try CLI.readInput(file, command: "encode")) {
            if text.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            var entry: [UInt8] = []
            do {
                let event = try EventJSON.decode(text)
                try encoder.appendBatchEntry(event, to: &entry)
            } catch {
                // Nothing is written unless every line encodes: a partial batch would hide the error.
                throw CLI.failure("spoor encode: line \(number): \(error)")
            }
            guard frames else {
                output += entry
                continue
            }
            // Like a seal: a batch takes at least one record, then stops at the count or the byte budget.
            if records > 0, batch.count + entry.count > Self.maxBatchBytes { try seal() }
            batch += entry
            records += 1
            if records == batchSize { try seal() }
        }
        try seal()
        CLI.output(output)
    }
}

/// The `--codec` names.
enum FrameCodec: String, ExpressibleByArgument, CaseIterable {
    case zstd, gzip, none

    var codec: Codec {
        switch self {
        case .zstd: .zstd
        case .gzip: .gzip
        case .none: .none
        }
    }
}
