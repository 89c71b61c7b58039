#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpoorTesting
import Testing
import SpoorModel
import SpoorWire
import SpoorLog

/// `spoor events`: pending batches and live records as JSON lines, oldest first; `--follow` while another
/// process writes.
@Suite("spoor events")
struct EventsCommandTests {
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("spoor-events-\(UUID().uuidString)", isDirectory: true)
    }

    static func append(_ sequences: Range<Int>, to log: EventLog) throws {
        let encoder = EventEncoder()
        var buffer = RecordBuffer()
        for sequence in sequences {
            try buffer.append(Event(name: "Step", time: 1_700_000_000_000 + Int64(sequence), sequence: UInt64(sequence), distinctID: "d",
                                    anonymousID: "a", lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code),
                                    properties: ["n": .int(Int64(sequence))]), using: encoder)
        }
        log.append(buffer)
    }

    /// The `sequence` of each JSON line.
    static func sequences(_ lines: [String]) -> [Int] {
        lines.compactMap { line in
            guard case .int(let sequence)? = (try? JSONValue.parse(line))?["sequence"] else { return nil }
            return Int(sequence)
        }
    }

    @Test func batchesThenLiveRecordsOldestFirstInTheDecodeShape() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try EventLog(directory: directory)
        try Self.append(0..<25, to: log)
        try log.seal(maxRecords: 10, codec: .zstd)
        try log.seal(maxRecords: 5, codec: .gzip)
        log.close()

        let result = try await SpoorProcess.run(["events", directory.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(Self.sequences(lines) == Array(0..<25))
        // Each line is what `spoor decode` prints for the same event.
        let first = try EventJSON.decode(lines[0])
        #expect(first.name == "Step" && first.properties["n"] == .int(0))
        #expect(lines[0] == EventJSON.encode(first))

        let limited = try await SpoorProcess.run(["events", directory.path, "--limit", "12"])
        #expect(Self.sequences(limited.stdoutText.split(separator: "\n").map(String.init)) == Array(0..<12))
    }

    @Test func aStorageDirectoryIsReadThroughItsLog() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let scenario = #"{"t": 0, "do": "track", "event": "A"}"# + "\n" + #"{"t": 1, "do": "track", "event": "B"}"#
        let simulated = try await SpoorProcess.run(["simulate", "-", "--storage", storage.path], input: Data(scenario.utf8))
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let result = try await SpoorProcess.run(["events", storage.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText == simulated.stdoutText)
    }

    @Test func usageAndMissingDirectories() async throws {
        let missing = try await SpoorProcess.run(["events", "/nonexistent/spoor"])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("spoor events: "))
        let badLimit = try await SpoorProcess.run(["events", "/tmp", "--limit", "0"])
        #expect(badLimit.status == 64)
        #expect(badLimit.stderr.hasPrefix("spoor events: "), "\(badLimit.stderr)")
    }

    /// The test process writes (holding the log's lock) while `spoor events --follow` reads: every event
    /// shows up exactly once, in order, across appends and seals, and the signal stops it cleanly.
    @Test(arguments: [SIGTERM, SIGINT])
    func followWhileAnotherProcessAppendsAndSeals(signal: Int32) async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try EventLog(directory: directory)
        defer { log.close() }
        try Self.append(0..<5, to: log)
        try log.seal(maxRecords: 2, codec: .zstd)

        let follower = try ChildProcess(["events", directory.path, "--follow", "--interval", "20"])
        var lines = await follower.lines { $0.count >= 5 }
        #expect(Self.sequences(lines) == Array(0..<5), "\(lines)")

        // Records already printed go into a batch, new ones arrive, and a seal takes printed and new ones.
        try log.seal(maxRecords: 2, codec: .gzip)
        try Self.append(5..<9, to: log)
        lines = await follower.lines { $0.count >= 9 }
        #expect(Self.sequences(lines) == Array(0..<9))
        try Self.append(9..<14, to: log)
        try log.seal(maxRecords: 6, codec: .zstd)
        try Self.append(14..<20, to: log)
        lines = await follower.lines { $0.count >= 20 }
        #expect(Self.sequences(lines) == Array(0..<20))

        #expect(await follower.stop(with: signal)?.status == 0)
        #expect(Self.sequences(await follower.lines()) == Array(0..<20))
        let errors = await follower.standardError()
        #expect(errors.isEmpty, "\(errors)")
    }

    /// A real tracker in a child process writes; `--follow` sees its events, then the `$AppEnd` it writes
    /// when SIGTERM ends its session.
    @Test func followARunningTrackerInAnotherProcess() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let child = try ChildProcess([storage.path, "wait"], executable: SpoorProcess.lifecycleChild)
        #expect(await child.lines { $0.contains("ready") } == ["ready"])

        let follower = try ChildProcess(["events", storage.path, "--follow", "--interval", "20"])
        let names: @Sendable ([String]) -> [String] = { lines in
            lines.compactMap { line in
                guard case .string(let name)? = (try? JSONValue.parse(line))?["event"] else { return nil }
                return name
            }
        }
        var lines = await follower.lines { names($0).contains("ChildWorked") }
        #expect(names(lines).contains("$AppStart"))
        #expect(names(lines).contains("ChildWorked"))

        // The child ends its session, then dies of the signal as a well-behaved process does.
        #expect(await child.stop(with: SIGTERM)?.status == 128 + SIGTERM)
        lines = await follower.lines { names($0).contains("$AppEnd") }
        #expect(names(lines).suffix(2) == ["$AppPageLeave", "$AppEnd"], "\(names(lines))")
        #expect(Set(lines).count == lines.count, "an event was printed twice")
        #expect(await follower.stop(with: SIGINT)?.status == 0)
    }

    /// A stop signal sent the moment the first line is out still ends the follow cleanly (exit 0): the handlers
    /// are in place before anything is printed, so no signal falls into a gap where it is ignored. Twenty
    /// rounds, alternating SIGTERM and SIGINT; the earlier dispatch-source handling lost some of them.
    @Test func aStopSignalRightAfterTheFirstLineEndsTheFollow() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try EventLog(directory: directory)
        try Self.append(0..<3, to: log)
        log.close()
        for round in 0..<20 {
            let follower = try ChildProcess(["events", directory.path, "--follow", "--interval", "60000"])
            let lines = await follower.lines { !$0.isEmpty }
            #expect(Self.sequences(Array(lines.prefix(1))) == [0], "round \(round): \(lines)")
            let signal = round.isMultiple(of: 2) ? SIGTERM : SIGINT
            let status = await follower.stop(with: signal)?.status, errors = await follower.standardError()
            #expect(status == 0, "round \(round): \(errors)")
        }
    }

    /// `spoor events --follow | head -n 2` ends when head does, even while no event comes.
    @Test func followStopsWhenItsReaderGoesAway() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try EventLog(directory: directory)
        try Self.append(0..<5, to: log)
        log.close()
        let command = "'\(SpoorProcess.executable.path)' events '\(directory.path)' --follow --interval 20 | head -n 2; "
            + "echo \"status ${PIPESTATUS[0]:-0}\""
        let shell = try ChildProcess(["-c", command], executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(await shell.termination()?.status == 0)
        let lines = await shell.lines { $0.count >= 3 }
        #expect(Self.sequences(Array(lines.prefix(2))) == [0, 1])
        #expect(lines.last == "status 0", "\(lines)")
    }

    /// Following an empty directory that an app's first start turns into its storage directory.
    @Test func followAnEmptyDirectoryAnAppThenStartsIn() async throws {
        let storage = Self.temporaryDirectory()
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: storage) }
        let follower = try ChildProcess(["events", storage.path, "--follow", "--interval", "20"])
        let child = try await SpoorProcess.run([storage.path, "exit"], tool: SpoorProcess.lifecycleChild)
        #expect(child.status == 0, "\(child.stderr)")
        let lines = await follower.lines { $0.contains { $0.contains(#""event":"$AppEnd""#) } }
        #expect(lines.contains { $0.contains(#""event":"ChildWorked""#) }, "\(lines)")
        #expect(lines.contains { $0.contains(#""event":"$AppEnd""#) }, "\(lines)")
        #expect(await follower.stop(with: SIGTERM)?.status == 0)
    }
}
