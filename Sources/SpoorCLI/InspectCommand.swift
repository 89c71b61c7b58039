import ArgumentParser
import Foundation
import SpoorTransport

/// `spoor inspect DIR [--json]`: what a storage directory holds, read without changing it.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Segments, records, sealed batches and counters of a storage directory.",
        discussion: "Reads the directory without changing it. Example: spoor inspect ~/.spoor/log --json"
    )

    @Argument(help: "The storage directory to read.", completion: .directory)
    var directory: String

    @Flag(help: "Print the report as JSON, for programs.")
    var json = false

    func run() throws {
        let report: LogReport
        do {
            report = try EventLog.inspect(directory: URL(fileURLWithPath: directory))
        } catch {
            throw CLI.failure("spoor inspect: \(error)", status: CLI.cannotRead)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(report) else { throw CLI.failure("spoor inspect: cannot encode the report", status: 1) }
            CLI.output(Array(data) + Array("\n".utf8))
        } else {
            CLI.output(Array(Self.text(report).utf8))
        }
    }
    /// The human-readable report.
    static func text(_ report: LogReport) -> String {
        var out = "Spoor storage: \(report.directory)\(report.inUse ? " (open in another process: counters may be behind)" : "")\n"
        let head = report.headSegment.map { " from \($0) @ \(report.headOffset)" } ?? ""
        out += "  live records: \(report.liveRecords) (\(bytes(report.liveBytes))) in \(report.segments.count) segment\(report.segments.count == 1 ? "" : "s")\(head)\n"
        out += "  sealed batches: \(report.batches.count), \(report.batches.compactMap(\.records).reduce(0, +)) records\n"
        let c = report.counters
        out += "  counters (state file \(report.stateFile)): dropped \(c.dropped), corrupt \(c.corrupt), torn tails \(c.tornTails), "
            + "write errors \(c.writeErrors), quarantined \(c.quarantined), sealed \(c.sealed), released \(c.released), rejected \(c.rejected)\n"
        if !report.segments.isEmpty {
            out += "\nsegments:\n"
            for segment in report.segments {
                out += "  \(segment.file)  \(bytes(segment.bytes))  \(segment.records) records, \(segment.liveRecords) live"
                if segment.skippedRegions > 0 {
                    out += ", \(segment.skippedRegions) corrupt region\(segment.skippedRegions == 1 ? "" : "s") skipped (counted)"
                }
                if segment.corruptRegions > 0 {
                    out += ", \(segment.corruptRegions) corrupt region\(segment.corruptRegions == 1 ? "" : "s") not yet recovered"
                }
                if segment.tailBytes > 0 { out += ", \(segment.tailIsTorn ? "torn" : "damaged") tail of \(bytes(segment.tailBytes))" }
                if let problem = segment.problem { out += "  UNUSABLE: \(problem)" }
                out += "\n"
            }
        }
        if !report.batches.isEmpty {
            out += "\noutbox:\n"
            for batch in report.batches {
                if let problem = batch.problem {
                    out += "  \(batch.file)  UNREADABLE: \(problem)\n"
                    continue
                }
                let sealed = batch.sealedAt.map { date($0) } ?? "?"
                out += "  \(batch.id ?? "?")  \(batch.codec ?? "?")  \(batch.records ?? 0) records  "
                    + "\(bytes(batch.bytes)) (\(bytes(batch.uncompressedBytes ?? 0)) uncompressed)  sealed \(sealed)\n"
            }
        }
        if !report.quarantined.isEmpty { out += "\nmoved aside as damaged: \(report.quarantined.joined(separator: ", "))\n" }
        if !report.foreign.isEmpty { out += "\nnot Spoor's (left alone): \(report.foreign.joined(separator: ", "))\n" }
        return out
    }

    static func bytes(_ count: Int) -> String {
        count < 10 * 1024 ? "\(count) B" : count < 10 << 20 ? "\(count >> 10) KiB" : "\(count >> 20) MiB"
    }

    static func date(_ millis: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }
}
