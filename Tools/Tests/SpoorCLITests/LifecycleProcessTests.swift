#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpoorTesting
import SpoorModel
import SpoorWire
import SpoorLog
import SpoorTooling
import Testing

/// Real processes with the process lifecycle source (`SpoorLifecycleChild`, a program of these tests): signals, exit, kill -9 and
/// a real crash, then what the log holds.
@Suite("Lifecycle in real processes", .serialized)
struct LifecycleProcessTests {
    struct NotReady: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a child over `directory` and waits until it printed `ready` (its events are durable); throws if
    /// it ended (or the bound passed) without.
    static func startChild(
        _ directory: URL, mode: String, source: String = "process", environment: [String: String] = [:]
    ) async throws -> ChildProcess {
        let child = try ChildProcess(
            [directory.path, mode, source], executable: SpoorProcess.lifecycleChild, environment: environment)
        let lines = await child.lines { $0.contains("ready") }
        guard lines.contains("ready") else {
            throw NotReady(description: "the child printed \(lines) and \(await child.standardError())")
        }
        return child
    }

    /// The events in the storage directory's logs (each launch's; a launch seals the ones before it left into
    /// batches when it adopts them), in sequence order.
    static func loggedEvents(_ directory: URL) throws -> [Event] {
        var events: [Event] = []
        let decoder = EventDecoder()
        for log in try StorageInspection.inspect(directory).logs {
            let snapshot = try EventLog.snapshot(directory: log.directory)
            for batch in snapshot.batches + snapshot.claimed {
                if let frame = batch.frame { events += try decoder.decodeBatch(frame.payload) }
            }
            for record in snapshot.records { events += try decoder.decodeBatch(record.batch) }
        }
        return events.enumerated().sorted { ($0.element.sequence, $0.offset) < ($1.element.sequence, $1.offset) }.map(\.element)
    }

    static func duration(_ event: Event) -> Double? {
        if case .double(let value)? = event.properties["event_duration"] { return value }
        return nil
    }

    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-process-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("SIGTERM ends the session: $AppPageLeave and $AppEnd are in the log after the process is gone",
          arguments: [SIGTERM, SIGINT])
    func terminationSignal(signal: Int32) async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try await Self.startChild(directory, mode: "wait")
        // The source lets the signal end the process as it would have.
        #expect(await child.stop(with: signal)?.status == 128 + signal)
        let names = try Self.loggedEvents(directory).map(\.name)
        #expect(names == ["$AppStart", "$AppViewScreen", "ChildWorked", "$AppPageLeave", "$AppEnd"])
    }

    @Test("A normal exit ends the session through the exit hook")
    func normalExit() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try await Self.startChild(directory, mode: "exit")
        #expect(await child.termination()?.status == 0)
        let events = try Self.loggedEvents(directory)
        #expect(events.map(\.name) == ["$AppStart", "$AppViewScreen", "ChildWorked", "$AppPageLeave", "$AppEnd"])
        #expect(events.last?.properties["$app_end_reason"] == nil)
    }

    @Test("SIGKILL mid-session: the next launch emits the recovered $AppPageLeave and $AppEnd before its $AppStart")
    func killRecovery() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await Self.startChild(directory, mode: "wait")
        #expect(await first.stop(with: SIGKILL)?.status == 128 + SIGKILL)
        #expect(try Self.loggedEvents(directory).map(\.name) == ["$AppStart", "$AppViewScreen", "ChildWorked"])

        let second = try await Self.startChild(directory, mode: "exit")
        #expect(await second.termination()?.status == 0)
        let events = try Self.loggedEvents(directory)
        #expect(events.map(\.name) == [
            "$AppStart", "$AppViewScreen", "ChildWorked",
            "$AppPageLeave", "$AppEnd",
            "$AppStart", "$AppViewScreen", "ChildWorked", "$AppPageLeave", "$AppEnd",
        ])
        guard events.count == 10 else { return }
        #expect(events[3].properties["$app_end_reason"] == "recovered")
        #expect(events[4].properties["$app_end_reason"] == "recovered")
        #expect(events[4].properties["$screen_name"] == nil)
        // Timed to the last moment the first process was known alive: after its start, before the relaunch.
        #expect(events[4].time >= events[0].time && events[4].time <= events[5].time)
        #expect((Self.duration(events[4]) ?? -1) >= 0)
        #expect(events[5].properties["$is_first_time"] == false)
    }

    @Test("A real crash (SIGSEGV) is recorded by the signal handler, which chains to the one before it; the next launch emits AppCrashed first",
          arguments: [false, true])
    func crashRecovery(swiftBacktracer: Bool) async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await Self.startChild(
            directory, mode: "crash", environment: ["SWIFT_BACKTRACE": swiftBacktracer ? "enable=yes" : "enable=no"])
        let status = await first.termination()?.status, errors = await first.standardError()
        if swiftBacktracer {
            // The handler before Spoor's is the Swift runtime's backtracer: it reports the crash and returns, so
            // `raise` returns and the child goes on to its `exit(1)`.
            #expect(errors.contains("*** Program crashed"), "\(errors)")
            #expect(status == 1, "\(errors)")
        } else {
            // No handler before Spoor's: the default action runs, and the process dies of the signal as it
            // would have without Spoor.
            #expect(status == 128 + SIGSEGV, "\(errors)")
        }
        let second = try await Self.startChild(directory, mode: "exit")
        #expect(await second.termination()?.status == 0)
        let events = try Self.loggedEvents(directory)
        #expect(Array(events.map(\.name).prefix(7)) == [
            "$AppStart", "$AppViewScreen", "ChildWorked", "AppCrashed", "$AppPageLeave", "$AppEnd", "$AppStart",
        ])
        guard events.count >= 6 else { return }
        #expect(events[3].properties["app_crashed_reason"] == "SIGSEGV")
        #expect(events[5].properties["$app_end_reason"] == "recovered")
    }

    @Test("shutdown() ends the session before the log closes, with every source; two runs give two paired sessions",
          arguments: ["process", "notifications", "manual"])
    func shutdownEndsTheSession(source: String) async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for _ in 0..<2 {
            let child = try await Self.startChild(directory, mode: "shutdown", source: source)
            #expect(await child.termination()?.status == 0, "\(source)")
        }
        let events = try Self.loggedEvents(directory)
        let session = ["$AppStart", "$AppViewScreen", "ChildWorked", "$AppPageLeave", "$AppEnd"]
        #expect(events.map(\.name) == session + session, "\(source)")
        // Nothing was left for recovery: no `$app_end_reason`, and each end is timed after its start.
        #expect(events.allSatisfy { $0.properties["$app_end_reason"] == nil }, "\(source)")
        #expect(events.filter { $0.name == "$AppEnd" }.allSatisfy { (Self.duration($0) ?? -1) >= 0 })
    }

    /// The README's Linux example: `autoTrack = .all`, `attach(ProcessLifecycleSource())`, events, then
    /// `await tracker.shutdown()` at the end of `main`. Its log holds a paired session per run.
    @Test func readmeLinuxExampleLeavesPairedSessions() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for _ in 0..<2 {
            let child = try await Self.startChild(directory, mode: "shutdown")
            #expect(await child.termination()?.status == 0)
        }
        let names = try Self.loggedEvents(directory).map(\.name).filter { $0 == "$AppStart" || $0 == "$AppEnd" }
        #expect(names == ["$AppStart", "$AppEnd", "$AppStart", "$AppEnd"])
    }
}
