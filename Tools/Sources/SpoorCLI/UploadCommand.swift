import ArgumentParser
import Foundation
import SpoorTooling
import SpoorWire
import SpoorUpload
import Logging
import SpoorModel
import SpoorTracker
import SpoorLog

/// `spoor upload DIR --to URL [--token T] [--json]`: sends what a storage directory holds to a collector, once.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Send the pending batches of a storage directory to a collector, once, and report each batch.",
        discussion: """
            DIR is the tracker's storage directory or the log directory inside it; the first line says which was \
            found. Events still in the log are sealed into batches first, as the tracker would. Each batch gets one \
            attempt, with the tracker's rules: 2xx releases it, 413 splits it, another 4xx sets it aside in \
            rejected/; on a 408, 429, 5xx, 401, 403 or a network error the batch is kept and the rest wait for \
            the next run. A log directory must not be open in a running app (its lock is taken); in a storage \
            directory, the logs of processes that are gone are adopted and every sealed batch of the others, \
            running ones included, is claimed and sent (the collector stores a batch id once).
            Exit status: 0 everything delivered (or set aside); 1 batches left; 66 DIR unreadable or in use.
            Example: spoor upload ~/.local/share/myapp/spoor --to http://127.0.0.1:8080/v1/batch
            """
    )

    @Argument(help: ArgumentHelp("The storage directory or the log directory.", valueName: "dir"), completion: .directory)
    var directory: String

    @Option(help: ArgumentHelp("The collector's batch endpoint (or its origin; /v1/batch is added).", valueName: "url"))
    var to: String

    @Option(help: ArgumentHelp("Sent as Authorization: Bearer <token>.", valueName: "token"))
    var token: String?

    @Option(help: ArgumentHelp("The longest one request may take, in seconds.", valueName: "seconds"))
    var timeout: Double = 30

    @Flag(help: "Print one JSON object per batch, then a summary object, for programs.")
    var json = false

    func validate() throws {
        guard let url = URL(string: to), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw ValidationError("--to must be an http or https URL with a host, got '\(to)'")
        }
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be between 0 and 600 seconds") }
    }

    func run() async throws {
        do {
            try await upload()
        } catch let code as ExitCode {
            throw code
        } catch {
            throw ExitCode(CLI.fail("spoor upload: \(error)", status: 1))
        }
    }

    private func upload() async throws {
        let inspection: StorageInspection
        do {
            inspection = try StorageInspection.inspect(URL(fileURLWithPath: directory))
        } catch {
            throw CLI.failure("spoor upload: \(error)", status: CLI.cannotRead)
        }
        guard inspection.logExists else {
            throw CLI.failure("spoor upload: \(inspection.logDirectory.path) does not exist: nothing to send", status: CLI.cannotRead)
        }
        FileHandle.standardError.write(Data("spoor upload: \(inspection.layout.rawValue) \(inspection.directory.path); log \(inspection.logDirectory.path)\n".utf8))

        var logger = Logger(label: "spoor.upload") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        let log: EventLog
        do {
            log = try inspection.openLogForUpload(logger: logger)
        } catch {
            throw CLI.failure("spoor upload: \(error)", status: CLI.cannotRead)
        }
        defer { log.close() }

        var configuration = UploadConfiguration(url: Tracker.batchEndpoint(URL(string: to)!), token: token)
        configuration.requestTimeout = .milliseconds(Int64(timeout * 1000))
        configuration.flushInterval = nil
        configuration.networkMonitor = nil
        let json = json
        configuration.onAttempt = { attempt in
            let line = json ? Self.json(attempt).serialized : Self.text(attempt)
            CLI.output(Array((line + "\n").utf8))
        }
        let uploader: Uploader
        do {
            uploader = try Uploader(log: log, configuration: configuration, logger: logger)
        } catch {
            throw CLI.failure("spoor upload: \(error)", status: CLI.cannotRead)
        }
        uploader.start(sendingLeftovers: false)
        let result = await uploader.flush()
        await uploader.stop()
        if json {
            var members: [JSONValue.Member] = [
                .init("delivered_batches", .int(Int64(result.deliveredBatches))),
                .init("delivered_events", .int(Int64(result.deliveredEvents))),
                .init("rejected_batches", .int(Int64(result.rejectedBatches))),
                .init("pending_batches", .int(Int64(result.pendingBatches))),
                .init("pending_events", .int(Int64(result.pendingEvents))),
            ]
            members.append(.init("pending_reason", result.pendingReason.map { .string($0.description) } ?? .null))
            CLI.output(Array((JSONValue.object(members).serialized + "\n").utf8))
        } else {
            CLI.output(Array("\(result)\n".utf8))
        }
        if result.pendingEvents > 0 { throw ExitCode(1) }
    }

    static func text(_ attempt: UploadAttempt) -> String {
        var line = "\(attempt.batchID)  \(attempt.records) events  \(InspectCommand.bytes(attempt.bytes))  "
        line += attempt.status.map { "\($0)" } ?? "no answer"
        line += "  \(attempt.outcome.rawValue)"
        if let error = attempt.error, !error.isEmpty { line += ": \(error)" }
        return line
    }

    static func json(_ attempt: UploadAttempt) -> JSONValue {
        .object([
            .init("batch_id", .string(attempt.batchID.description)), .init("events", .int(Int64(attempt.records))),
            .init("bytes", .int(Int64(attempt.bytes))), .init("status", attempt.status.map { .int(Int64($0)) } ?? .null),
            .init("outcome", .string(attempt.outcome.rawValue)), .init("error", attempt.error.map(JSONValue.string) ?? .null),
        ])
    }
}
