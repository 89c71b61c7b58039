import ArgumentParser
import Foundation
import SpoorTooling
import SpoorModel
import SpoorWire
import SpoorTracker
import SpoorLog

/// `spoor events DIR [--follow] [--limit N]`: the events sealed in the outbox and the live records of a log,
/// oldest first, as JSON lines (the `spoor decode` shape); with `--follow`, new ones as they arrive.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "The pending batches and live records of a storage directory as JSON lines, oldest first.",
        discussion: """
            DIR is the tracker's storage directory or a log directory inside it. In a storage directory that \
            several processes share, every process's log is read in turn. Events in sealed batches \
            waiting for upload come first, then the live records. The log is read without its lock, so a \
            running app is neither blocked nor disturbed. With --follow, new events are printed as the app \
            records them, like tail -f, until SIGINT or SIGTERM; a batch uploaded and released between two \
            polls is not shown.
            Example: spoor events ~/.local/share/myapp/spoor --follow | jq .event
            """
    )

    @Argument(help: ArgumentHelp("The storage directory or the log directory.", valueName: "dir"), completion: .directory)
    var directory: String

    @Flag(name: [.short, .long], help: "Keep printing new events until interrupted (SIGINT or SIGTERM).")
    var follow = false

    @Option(help: ArgumentHelp("Stop after printing this many events.", valueName: "n"))
    var limit: Int?

    @Option(help: ArgumentHelp("With --follow, how often to look for new events, in milliseconds.", valueName: "ms"))
    var interval: Int = 200

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if interval < 1 || interval > 60_000 { throw ValidationError("--interval must be between 1 and 60000") }
    }

    func run() throws {
        var inspection: StorageInspection
        do {
            inspection = try StorageInspection.inspect(URL(fileURLWithPath: directory))
        } catch {
            throw CLI.failure("spoor events: \(error)", status: CLI.cannotRead)
        }
        var reader = StorageEventsReader(inspection: inspection, limit: limit)
        guard follow else {
            guard inspection.logExists else { return }
            do {
                try reader.poll()
            } catch {
                throw CLI.failure("spoor events: \(error)", status: CLI.cannotRead)
            }
            if reader.badRecords > 0 { throw ExitCode(CLI.badInput) }
            return
        }
        let stop = StopSignals()
        // A reader that goes away ends the follow like a signal does, whether or not events are coming.
        signal(SIGPIPE, SIG_IGN)
        while !reader.isDone, !StandardOutput.isGone {
            // A directory no log has opened yet may still become a storage directory (an app's first
            // start creates its files one by one): look again until it is one or a log opens it.
            if inspection.layout == .logDirectory, !Self.hasLog(inspection.directory),
               let again = try? StorageInspection.inspect(inspection.directory) {
                inspection = again
                reader = StorageEventsReader(inspection: inspection, limit: limit)
            }
            if FileManager.default.fileExists(atPath: inspection.logDirectory.path) {
                do {
                    try reader.poll()
                } catch {
                    throw CLI.failure("spoor events: \(error)", status: CLI.cannotRead)
                }
            }
            if reader.isDone || stop.wait(timeout: .milliseconds(interval)) { break }
        }
    }

    /// Whether an event log has opened `directory` (every log creates its lock file first).
    static func hasLog(_ directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("lock").path)
    }
}

/// Prints what is new in every log of a directory since the last poll: one ``EventsReader`` per process's log,
/// found again at each poll (a process that starts adds one). A batch one process claimed from another's log is
/// printed once, by its id.
struct StorageEventsReader {
    let directory: URL
    let isStorage: Bool
    let limit: Int?
    private var readers: [String: EventsReader] = [:]
    private var printedBatches = Set<String>()

    init(inspection: StorageInspection, limit: Int?) {
        directory = inspection.directory
        isStorage = inspection.layout == .storageDirectory
        self.limit = limit
    }

    var printed: Int { readers.values.reduce(0) { $0 + $1.printed } }
    var badRecords: Int { readers.values.reduce(0) { $0 + $1.badRecords } }
    var isDone: Bool { readers.values.contains { $0.outputClosed } || limit.map { printed >= $0 } ?? false }

    mutating func poll() throws(StorageError) {
        let logs = isStorage ? ((try? StorageInspection.inspect(directory).logs) ?? []).map(\.directory) : [directory]
        for log in logs where !isDone {
            var reader = readers[log.path] ?? EventsReader(directory: log, limit: nil)
            reader.limit = limit.map { $0 - printed + reader.printed }
            do {
                try reader.poll(printedBatches: &printedBatches)
            } catch where isStorage && !FileManager.default.fileExists(atPath: log.path) {
                // Adopted and removed since the listing: its batches are in another log now.
            }
            readers[log.path] = reader
        }
    }
}

/// Prints what is new in a log since the last poll, never an event twice.
///
/// The cursor is where printed records end. A seal moves records from the segments to a batch in the
/// outbox; the batch's file name tells where the records it took end, so of a batch that ends past the
/// cursor only the events not printed as live records are printed.
struct EventsReader {
    let directory: URL
    var limit: Int?
    private(set) var printed = 0
    private(set) var badRecords = 0
    private var cursor = LogCursor()
    /// Live records printed that no batch has taken yet.
    private var printedLive: [LogCursor] = []

    init(directory: URL, limit: Int?) {
        self.directory = directory
        self.limit = limit
    }

    /// Whether the limit is reached or standard output is closed.
    var isDone: Bool { outputClosed || limit.map { printed >= $0 } ?? false }
    private(set) var outputClosed = false

    /// Prints what is new; `printedBatches` holds the ids of the batches printed whole by any log's reader.
    mutating func poll(printedBatches: inout Set<String>) throws(StorageError) {
        let snapshot = try EventLog.snapshot(directory: directory, after: cursor)
        var output = ""
        // Batches taken from other processes' logs: printed once, by id (they may have been printed there).
        for batch in snapshot.claimed where !isDone {
            guard let frame = batch.frame else { continue }
            let id = frame.header.batchID.description
            guard printedBatches.insert(id).inserted else { continue }
            for line in decode(frame.payload, at: "claimed/\(batch.file)") { emit(line, to: &output) }
        }
        for batch in snapshot.batches {
            let taken = printedLive.prefix { $0 < batch.end }.count
            printedLive.removeFirst(taken)
            if batch.isBeforeCursor { continue }
            cursor = batch.end
            if let id = batch.frame?.header.batchID.description {
                guard printedBatches.insert(id).inserted else { continue }
            }
            guard let frame = batch.frame else {
                badRecords += 1
                report("outbox/\(batch.file): \(batch.problem ?? "unreadable")")
                continue
            }
            for line in decode(frame.payload, at: "outbox/\(batch.file)").dropFirst(taken) { emit(line, to: &output) }
            if isDone { break }
        }
        printedLive.removeAll { $0 < snapshot.head }
        for record in snapshot.records where !isDone && record.position >= cursor {
            cursor = record.end
            printedLive.append(record.position)
            for line in decode(record.batch, at: "segment \(record.position.segment) offset \(record.position.offset)") {
                emit(line, to: &output)
            }
        }
        if !output.isEmpty, !CLI.output(Array(output.utf8)) { outputClosed = true }
    }

    private mutating func emit(_ line: String, to output: inout String) {
        guard !isDone else { return }
        output += line
        output += "\n"
        printed += 1
    }

    /// The JSON of each event of a `Batch` (a frame's payload, or one record's entry); a malformed event
    /// is reported and ends the batch.
    private mutating func decode(_ bytes: [UInt8], at place: String) -> [String] {
        var lines: [String] = []
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in
                try EventDecoder().forEachEvent(inBatch: raw) { lines.append(EventJSON.encode($0)) }
            }
        }
        if case .failure(let error) = result {
            badRecords += 1
            report("\(place): \(error)")
        }
        return lines
    }

    private func report(_ message: String) {
        _ = CLI.fail("spoor events: \(message)")
    }
}
