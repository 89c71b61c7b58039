import ArgumentParser
import Foundation
import SpoorTooling
import SpoorWire
import SpoorUpload
import SpoorModel
import SpoorTracker
import SpoorLog

/// `spoor inspect DIR [--json]`: what a tracker's storage directory or a log directory holds, read without
/// changing it.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "What a storage directory holds: identity, consent, lifecycle, the log, the outbox, rejected batches.",
        discussion: """
            DIR is the tracker's storage directory (what Configuration.storageDirectory names) or the log \
            directory inside it; the first line says which was found. Nothing is changed and no lock is taken, \
            so it is safe on the directory of a running app.
            Example: spoor inspect ~/.local/share/myapp/spoor --json
            """
    )

    @Argument(help: ArgumentHelp("The storage directory or the log directory.", valueName: "dir"), completion: .directory)
    var directory: String

    @Flag(help: "Print the report as JSON, for programs.")
    var json = false

    func run() throws {
        let inspection: StorageInspection
        var reports: [LogReport] = []
        do {
            inspection = try StorageInspection.inspect(URL(fileURLWithPath: directory))
            for log in inspection.logs { reports.append(try EventLog.inspect(directory: log.directory)) }
        } catch {
            throw CLI.failure("spoor inspect: \(error)", status: CLI.cannotRead)
        }
        if json {
            CLI.output(Array((Self.json(inspection, reports).serialized + "\n").utf8))
        } else {
            CLI.output(Array(Self.text(inspection, reports).utf8))
        }
    }

    // MARK: - For people

    static func text(_ inspection: StorageInspection, _ reports: [LogReport]) -> String {
        var out = ""
        if inspection.layout == .storageDirectory {
            out += "Spoor storage directory (the tracker's): \(inspection.directory.path)\n"
            if let state = inspection.state { out += stateText(state) }
            if let checkpoint = inspection.checkpoint { out += checkpointText(checkpoint) }
            if let crash = inspection.pendingCrash {
                out += "  pending crash: \(date(crash.time)) \(crash.reason) (the next start records $AppCrashed)\n"
            } else {
                out += "  pending crash: none\n"
            }
            if !inspection.foreign.isEmpty { out += "  not the tracker's (left alone): \(inspection.foreign.joined(separator: ", "))\n" }
            out += "\n"
            if reports.isEmpty {
                out += "Logs: \(inspection.logDirectory.path) (none yet: no tracker has started)\n"
            } else {
                out += "Logs: \(inspection.logDirectory.path), one per process: \(reports.count)\n"
            }
            for (log, report) in zip(inspection.logs, reports) {
                let owner = log.pid.map { "process \($0), \(log.running ? "running" : "gone: the next start adopts it")" }
                    ?? "an older Spoor's single log: the next start adopts it"
                out += "\n" + text(report, title: "Log directory (\(owner))")
                if let upload = log.upload { out += "\n" + uploadText(upload) }
            }
            if !inspection.setAside.isEmpty {
                out += "\nset aside (emptied logs of processes that are gone, kept for the damaged or foreign files they held; never adopted again):\n"
                for folder in inspection.setAside {
                    let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
                    out += "  \(folder.lastPathComponent)/  \(files.joined(separator: ", "))\n"
                }
            }
        } else if let report = reports.first {
            out += text(report, title: "Spoor log directory")
            if let upload = inspection.upload { out += "\n" + uploadText(upload) }
        }
        if let rejectedDirectory = inspection.rejectedDirectory {
            let dropped = inspection.rejectedSummary?.dropped ?? 0
            out += "\nrejected by the collector (\(rejectedDirectory.lastPathComponent)/): \(inspection.rejected.count) batch\(inspection.rejected.count == 1 ? "" : "es")"
                + "\(dropped > 0 ? ", \(dropped) older dropped to stay within the limits (counted)" : "")\n"
            let statuses = Dictionary((inspection.rejectedSummary?.entries ?? []).map { ($0.file, $0.status) }, uniquingKeysWith: { a, _ in a })
            out += batchLines(inspection.rejected, statuses: statuses)
        }
        return out
    }

    /// The uploader's counters, as the tracker last saved them.
    static func uploadText(_ c: UploadCounters) -> String {
        var out = "upload (as last saved by the tracker): \(c.state)"
        if let status = c.lastStatus { out += ", last status \(status)" }
        if let next = c.nextAttemptAt { out += ", next attempt \(date(next))" }
        out += "\n  delivered \(c.deliveredBatches) batches, \(c.deliveredEvents) events, \(bytes(c.deliveredBytes))"
            + " (\(c.duplicateBatches) already stored); \(c.requests) requests, \(c.retries) retried (\(c.timeouts) timeouts)\n"
        out += "  rejected \(c.rejectedBatches) batches (\(c.rejectedEvents) events, \(c.rejectedDropped) dropped); \(c.splits) split after 413;"
            + " paused \(c.authorizationPauses)× for authorization, \(c.serverPauses)× by Retry-After\n"
        if let error = c.lastError { out += "  last error: \(error)\n" }
        return out
    }

    static func stateText(_ state: StorageInspection.State) -> String {
        var out = "  state.json: \(state.status)\(state.problem.map { " (\($0))" } ?? "")\n"
        guard state.status == "ok" else { return out }
        out += "  identity: distinct id \(state.distinctID ?? "?"), anonymous id \(state.anonymousID ?? "?"), "
            + "login id \(state.loginID ?? "none"), device id \(state.deviceID ?? "?")\n"
        switch state.optedOut {
        case true?: out += "  consent: OPTED OUT (nothing is recorded, sealed or uploaded)\n"
        case false?: out += "  consent: opted in (tracking)\n"
        case nil: out += "  consent: ?\n"
        }
        if state.superProperties.isEmpty {
            out += "  super properties: none\n"
        } else {
            let list = state.superProperties.map { "\($0.key)=\(EventJSON.json($0.value).serialized)" }
            out += "  super properties: \(list.joined(separator: " "))\n"
        }
        out += "  first day \(state.firstDay ?? "?"), next sequence \(state.nextSequence.map(String.init) ?? "?")"
            + "\(state.firstLaunchPending == true ? ", first launch pending" : "")\n"
        return out
    }

    static func checkpointText(_ checkpoint: StorageInspection.Checkpoint) -> String {
        var out = "  lifecycle checkpoint: \(checkpoint.status)\(checkpoint.problem.map { " (\($0))" } ?? "")"
        guard checkpoint.status == "ok" else { return out + "\n" }
        out += ", state \(checkpoint.state ?? "?")"
        out += checkpoint.sessionStart.map { ", session open since \(date($0))" } ?? ", no open session"
        if !checkpoint.pages.isEmpty { out += ", pages \(checkpoint.pages.joined(separator: ", "))" }
        out += checkpoint.lastAlive.map { ", last alive \(date($0))" } ?? ""
        return out + "\n"
    }

    static func batchLines(_ batches: [LogReport.Batch], statuses: [String: Int] = [:]) -> String {
        var out = ""
        for batch in batches {
            if let problem = batch.problem {
                out += "  \(batch.file)  UNREADABLE: \(problem)\n"
                continue
            }
            let sealed = batch.sealedAt.map { date($0) } ?? "?"
            out += "  \(batch.id ?? "?")  \(batch.codec ?? "?")  \(batch.records ?? 0) records  "
                + "\(bytes(batch.bytes)) (\(bytes(batch.uncompressedBytes ?? 0)) uncompressed)  sealed \(sealed)"
                + "\(statuses[batch.file].map { "  refused with \($0)" } ?? "")\n"
        }
        return out
    }

    // MARK: - For programs

    static func json(_ inspection: StorageInspection, _ reports: [LogReport]) -> JSONValue {
        func encoded(_ value: some Encodable) -> JSONValue {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard let data = try? encoder.encode(value), let json = try? JSONValue.parse(String(decoding: data, as: UTF8.self))
            else { return .null }
            return json
        }
        let logJSON = reports.first.map(encoded) ?? .null
        var members: [JSONValue.Member] = [.init("found", .string(inspection.layout.rawValue))]
        let statuses = Dictionary((inspection.rejectedSummary?.entries ?? []).map { ($0.file, $0.status) }, uniquingKeysWith: { a, _ in a })
        let rejected = JSONValue.array(inspection.rejected.map { batch in
            guard case .object(var object) = batchJSON(batch), let status = statuses[batch.file] else { return batchJSON(batch) }
            object.append(.init("status", .int(Int64(status))))
            return .object(object)
        })
        let upload = inspection.upload.map(encoded) ?? .null
        let rejectedDropped = JSONValue.int(Int64(inspection.rejectedSummary?.dropped ?? 0))
        guard inspection.layout == .storageDirectory else {
            // A log directory: the log report's own members, as before, plus what was found.
            if case .object(let logMembers) = logJSON { members += logMembers }
            if inspection.rejectedDirectory != nil {
                members.append(.init("rejected", rejected))
                members.append(.init("rejected_dropped", rejectedDropped))
            }
            members.append(.init("upload", upload))
            return .object(members)
        }
        members.append(.init("directory", .string(inspection.directory.path)))
        if let state = inspection.state {
            var object: [JSONValue.Member] = [.init("status", .string(state.status))]
            if let problem = state.problem { object.append(.init("problem", .string(problem))) }
            if state.status == "ok" {
                object += [
                    .init("distinct_id", optional(state.distinctID)), .init("anonymous_id", optional(state.anonymousID)),
                    .init("login_id", optional(state.loginID)), .init("device_id", optional(state.deviceID)),
                    .init("opted_out", state.optedOut.map(JSONValue.bool) ?? .null),
                    .init("super_properties", .object(state.superProperties.map { .init($0.key, EventJSON.json($0.value)) })),
                    .init("first_day", optional(state.firstDay)),
                    .init("next_sequence", state.nextSequence.map { .int(Int64(clamping: $0)) } ?? .null),
                    .init("first_launch_pending", state.firstLaunchPending.map(JSONValue.bool) ?? .null),
                ]
            }
            members.append(.init("state", .object(object)))
        }
        if let checkpoint = inspection.checkpoint {
            var object: [JSONValue.Member] = [.init("status", .string(checkpoint.status))]
            if let problem = checkpoint.problem { object.append(.init("problem", .string(problem))) }
            if checkpoint.status == "ok" {
                object += [
                    .init("state", optional(checkpoint.state)),
                    .init("session_start", checkpoint.sessionStart.map(JSONValue.int) ?? .null),
                    .init("pages", .array(checkpoint.pages.map(JSONValue.string))),
                    .init("last_alive", checkpoint.lastAlive.map(JSONValue.int) ?? .null),
                ]
            }
            members.append(.init("checkpoint", .object(object)))
        }
        members.append(.init("pending_crash", inspection.pendingCrash.map {
            .object([.init("time", .int($0.time)), .init("reason", .string($0.reason))])
        } ?? .null))
        members.append(.init("log_directory", .string(inspection.logDirectory.path)))
        // One member per process's log: its report's members, who made it, and its uploader's counters.
        let logs = zip(inspection.logs, reports).map { log, report -> JSONValue in
            var object: [JSONValue.Member] = [
                .init("directory", .string(log.directory.path)),
                .init("pid", log.pid.map { .int(Int64($0)) } ?? .null),
                .init("running", .bool(log.running)),
                .init("upload", log.upload.map(encoded) ?? .null),
            ]
            if case .object(let members) = encoded(report) { object += members.filter { $0.key != "directory" } }
            return .object(object)
        }
        members.append(.init("logs", .array(logs)))
        members.append(.init("rejected", rejected))
        members.append(.init("rejected_dropped", rejectedDropped))
        members.append(.init("foreign", .array(inspection.foreign.map(JSONValue.string))))
        members.append(.init("set_aside", .array(inspection.setAside.map { JSONValue.string($0.path) })))
        return .object(members)
    }

    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    static func batchJSON(_ batch: LogReport.Batch) -> JSONValue {
        var object: [JSONValue.Member] = [.init("file", .string(batch.file)), .init("bytes", .int(Int64(batch.bytes)))]
        if let problem = batch.problem { object.append(.init("problem", .string(problem))) }
        if let id = batch.id { object.append(.init("id", .string(id))) }
        if let codec = batch.codec { object.append(.init("codec", .string(codec))) }
        if let records = batch.records { object.append(.init("records", .int(Int64(records)))) }
        if let size = batch.uncompressedBytes { object.append(.init("uncompressedBytes", .int(Int64(size)))) }
        if let sealed = batch.sealedAt { object.append(.init("sealedAt", .int(sealed))) }
        return .object(object)
    }

    /// The human-readable report.
    static func text(_ report: LogReport, title: String) -> String {
        var out = "\(title): \(report.directory)\(report.inUse ? " (open in another process: counters may be behind)" : "")\n"
        let head = report.headSegment.map { " from \($0) @ \(report.headOffset)" } ?? ""
        out += "  live records: \(report.liveRecords) (\(bytes(report.liveBytes))) in \(report.segments.count) segment\(report.segments.count == 1 ? "" : "s")\(head)\n"
        let waiting = report.batches + report.claimed
        out += "  sealed batches: \(waiting.count), \(waiting.compactMap(\.records).reduce(0, +)) records\n"
        if !report.claimed.isEmpty {
            out += "  of them claimed from other processes' logs: \(report.claimed.count)\n"
        }
        let c = report.counters
        out += "  counters (state file \(report.stateFile)): dropped \(c.dropped), corrupt \(c.corrupt), torn tails \(c.tornTails), "
            + "write errors \(c.writeErrors), quarantined \(c.quarantined), sealed \(c.sealed), released \(c.released), rejected \(c.rejected)\n"
        if !report.segments.isEmpty {
            out += "\nsegments:\n"
            for segment in report.segments {
                out += "  \(segment.file)  \(bytes(segment.bytes))  \(segment.records) records, \(segment.liveRecords) live"
                if segment.contexts > 0 { out += ", \(segment.contexts) context\(segment.contexts == 1 ? "" : "s")" }
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
            out += "\noutbox:\n" + batchLines(report.batches)
        }
        if !report.claimed.isEmpty {
            out += "\nclaimed (from other processes' logs):\n" + batchLines(report.claimed)
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
