import Foundation
import SpoorWire
import Testing
import SpoorModel
import SpoorTracker
import SpoorTooling

/// `spoor inspect` over a tracker's storage directory: identity, super properties, consent, the
/// checkpoint, a pending crash, the log, the outbox and rejected batches.
@Suite("spoor inspect of a tracker's storage directory")
struct InspectStorageDirectoryTests {
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("spoor-storage-\(UUID().uuidString)", isDirectory: true)
    }

    /// A JSON object's member, or a failed expectation.
    static func member(_ value: JSONValue?, _ path: String...) -> JSONValue? {
        var current = value
        for key in path { current = current?[key] }
        return current
    }

    @Test func identitySuperPropertiesAndTheLogAfterASimulatedRun() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let scenario = """
            {"t": 0, "do": "registerSuperProperties", "properties": {"plan": "gold", "seats": 3}}
            {"t": 5, "do": "login", "id": "u42"}
            {"t": 9, "do": "track", "event": "Buy"}
            """
        let simulated = try await SpoorProcess.run(["simulate", "-", "--storage", storage.path], input: Data(scenario.utf8))
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let delivered = simulated.stdoutText.split(separator: "\n").count

        let text = try await SpoorProcess.run(["inspect", storage.path])
        #expect(text.status == 0, "\(text.stderr)")
        let out = text.stdoutText
        #expect(out.hasPrefix("Spoor storage directory (the tracker's): \(storage.standardizedFileURL.path)\n"), "\(out)")
        #expect(out.contains("identity: distinct id u42,"), "\(out)")
        #expect(out.contains("login id u42,"))
        #expect(out.contains(#"super properties: plan="gold" seats=3"#), "\(out)")
        #expect(out.contains("consent: opted in (tracking)"), "\(out)")
        #expect(out.contains("lifecycle checkpoint: ok"))
        #expect(out.contains("pending crash: none"))
        #expect(out.contains("Logs: \(storage.standardizedFileURL.path)/logs, one per process: 1"), "\(out)")
        #expect(out.contains("Log directory (process "), "\(out)")
        #expect(out.contains("live records: \(delivered) "), "\(out)")

        let json = try await SpoorProcess.run(["inspect", storage.path, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONValue.parse(json.stdoutText)
        #expect(report["found"] == .string("storage directory"))
        #expect(Self.member(report, "state", "login_id") == .string("u42"))
        #expect(Self.member(report, "state", "distinct_id") == .string("u42"))
        #expect(Self.member(report, "state", "super_properties", "seats") == .int(3))
        #expect(Self.member(report, "state", "opted_out") == .bool(false))
        guard case .array(let logs)? = report["logs"] else {
            Issue.record("no logs in \(json.stdoutText)")
            return
        }
        #expect(logs.count == 1)
        #expect(Self.member(logs.first, "liveRecords") == .int(Int64(delivered)))
        #expect(Self.member(logs.first, "running") == .bool(false))
        #expect(report["pending_crash"] == .null)
    }

    @Test func theLogDirectoryInsideIsNamedAsSuch() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let simulated = try await SpoorProcess.run(["simulate", "-", "--storage", storage.path], input: Data(#"{"t": 0, "do": "track", "event": "A"}"#.utf8))
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let log = try #require(try StorageInspection.inspect(storage).logs.first).directory.path
        let text = try await SpoorProcess.run(["inspect", log])
        #expect(text.status == 0)
        #expect(text.stdoutText.hasPrefix("Spoor log directory: \(URL(fileURLWithPath: log).standardizedFileURL.path)\n"), "\(text.stdoutText)")
        #expect(!text.stdoutText.contains("not Spoor's"))
        let json = try JSONValue.parse(try await SpoorProcess.run(["inspect", log, "--json"]).stdoutText)
        #expect(json["found"] == .string("log directory"))
        #expect(json["liveRecords"] == .int(1))
    }

    @Test func aCrashedProcessLeavesAPendingCrashAndAnOpenSession() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let child = try await SpoorProcess.run([storage.path, "crash"], tool: SpoorProcess.lifecycleChild)
        #expect(child.stdoutText == "ready\n")
        #expect(child.status != 0)

        let text = try await SpoorProcess.run(["inspect", storage.path]).stdoutText
        #expect(text.contains("pending crash: "), "\(text)")
        #expect(text.contains(" SIGSEGV (the next start records $AppCrashed)"), "\(text)")
        #expect(text.contains("state started, session open since "), "\(text)")
        #expect(text.contains("pages MainWindow"), "\(text)")

        let json = try JSONValue.parse(try await SpoorProcess.run(["inspect", storage.path, "--json"]).stdoutText)
        #expect(Self.member(json, "pending_crash", "reason") == .string("SIGSEGV"))
        #expect(Self.member(json, "checkpoint", "state") == .string("started"))
        #expect(Self.member(json, "checkpoint", "pages") == .array([.string("MainWindow")]))
    }

    @Test func rejectedBatchesAreListedWhenPresent() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let child = try await SpoorProcess.run([storage.path, "exit"], tool: SpoorProcess.lifecycleChild)
        #expect(child.status == 0, "\(child.stderr)")
        let rejected = storage.appendingPathComponent("rejected", isDirectory: true)
        try FileManager.default.createDirectory(at: rejected, withIntermediateDirectories: true)
        let frame = try Data(contentsOf: SpoorProcess.root.appendingPathComponent("docs/vectors/zstd.spb"))
        try frame.write(to: rejected.appendingPathComponent("a.spb"))
        try Data("not a frame".utf8).write(to: rejected.appendingPathComponent("b.spb"))

        let text = try await SpoorProcess.run(["inspect", storage.path]).stdoutText
        #expect(text.contains("rejected by the collector (rejected/): 2 batches"), "\(text)")
        #expect(text.contains("zstd  3 records"), "\(text)")
        #expect(text.contains("b.spb  UNREADABLE: "), "\(text)")
        let json = try JSONValue.parse(try await SpoorProcess.run(["inspect", storage.path, "--json"]).stdoutText)
        guard case .array(let batches)? = json["rejected"] else {
            Issue.record("no rejected array: \(json.serialized)")
            return
        }
        #expect(batches.count == 2)
        #expect(batches.first?["records"] == .int(3))
        #expect(batches.last?["problem"] != nil)
    }

    /// An emptied log set aside (`logs/<name>.bad`) for the damaged file it held is listed with what it holds.
    @Test func emptiedLogsSetAsideAreListed() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        let child = try await SpoorProcess.run([storage.path, "exit"], tool: SpoorProcess.lifecycleChild)
        #expect(child.status == 0, "\(child.stderr)")
        let setAside = storage.appendingPathComponent("logs/4242-00000000000000aa.bad", isDirectory: true)
        try FileManager.default.createDirectory(at: setAside, withIntermediateDirectories: true)
        try Data("damaged".utf8).write(to: setAside.appendingPathComponent("seg-0000000000000003.log.bad"))

        let text = try await SpoorProcess.run(["inspect", storage.path]).stdoutText
        #expect(text.contains("set aside (emptied logs"), "\(text)")
        #expect(text.contains("4242-00000000000000aa.bad/  seg-0000000000000003.log.bad"), "\(text)")
        #expect(!text.contains("process 4242"), "\(text)")
        let json = try JSONValue.parse(try await SpoorProcess.run(["inspect", storage.path, "--json"]).stdoutText)
        #expect(json["set_aside"] == .array([.string(setAside.standardizedFileURL.path)]))
    }

    @Test func aDirectoryThatIsNotThereCannotBeRead() async throws {
        let result = try await SpoorProcess.run(["inspect", "/nonexistent/spoor"])
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix("spoor inspect: "), "\(result.stderr)")
    }

    @Test func anOptedOutUserIsShownAsSuch() async throws {
        let storage = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storage) }
        var configuration = Configuration(storageDirectory: storage)
        configuration.tracking.startsOptedOut = true
        let tracker = try Tracker(configuration: configuration)
        #expect(!tracker.track("NotRecorded"))
        #expect(await tracker.shutdown(timeout: testBound))

        let text = try await SpoorProcess.run(["inspect", storage.path]).stdoutText
        #expect(text.contains("consent: OPTED OUT (nothing is recorded, sealed or uploaded)"), "\(text)")
        let json = try JSONValue.parse(try await SpoorProcess.run(["inspect", storage.path, "--json"]).stdoutText)
        #expect(Self.member(json, "state", "opted_out") == .bool(true))
        #expect(try await SpoorProcess.run(["events", storage.path]).stdoutText.isEmpty)
    }
}
