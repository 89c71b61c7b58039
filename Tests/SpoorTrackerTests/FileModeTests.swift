import Foundation
import SpoorModel
import SpoorLog
import SpoorTestSupport
import Testing

import SpoorTracker

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("stored events are private")
struct FileModeTests {
    static func mode(_ url: URL) -> mode_t? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    /// Every directory and file under `root`, with its permission bits.
    static func modes(under root: URL) -> [(String, mode_t, Bool)] {
        var found: [(String, mode_t, Bool)] = []
        for path in (FileManager.default.subpaths(atPath: root.path) ?? []).sorted() {
            let url = root.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), let mode = mode(url) else { continue }
            found.append((path, mode, isDirectory.boolValue))
        }
        return found
    }

    @Test func directoriesAre0700AndFiles0600() async throws {
        let parent = TemporaryDirectory()
        let storage = parent.url.appendingPathComponent("app/spoor", isDirectory: true)
        var configuration = Configuration(storageDirectory: storage)
        configuration.autoTrack.events = .all
        let tracker = try Tracker(configuration: configuration)
        tracker.attach(ManualLifecycleSource(), recordsCrashes: false)
        tracker.handle(.didBecomeActive)
        tracker.track("Private", properties: ["email": "a@example.com"])
        await tracker.flush()
        let log = try #require((tracker.pipeline.store as? EventLogStore)?.log)
        _ = try log.seal(maxRecords: 1, codec: .none)
        await tracker.shutdown(timeout: testBound)

        #expect(Self.mode(storage) == 0o700)
        let all = Self.modes(under: storage)
        let names = Set(all.map(\.0))
        let own = "logs/" + (try StoredLogs.only(in: storage).lastPathComponent)
        for expected in ["state.json", "logs", own, own + "/lifecycle.checkpoint", own + "/crash.marker", own + "/outbox", own + "/lock",
                         own + "/state", own + "/owner"] {
            #expect(names.contains(expected), "\(expected) missing: \(names.sorted())")
        }
        #expect(all.contains { $0.0.hasPrefix(own + "/outbox/") && !$0.2 }, "no sealed batch in \(names.sorted())")
        for (path, mode, isDirectory) in all {
            #expect(mode == (isDirectory ? 0o700 : 0o600), "\(path) is \(String(mode, radix: 8))")
        }
    }

    @Test func anExistingOpenDirectoryIsTightenedWithALogLine() async throws {
        let directory = TemporaryDirectory()
        let logDirectory = Tracker.logDirectory(in: directory.url)
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        chmod(directory.url.path, 0o755)
        chmod(logDirectory.path, 0o775)
        let h = try Harness(directory: directory)
        _ = try EventLog(directory: logDirectory, logger: h.logs.logger).close()
        #expect(Self.mode(directory.url) == 0o700)
        #expect(Self.mode(logDirectory) == 0o700)
        let notes = h.logs.all.filter { $0.message.contains("tightened to 0700") }
        #expect(notes.map { $0.metadata["was"] }.sorted { ($0 ?? "") < ($1 ?? "") } == ["755", "775"])
    }
}
