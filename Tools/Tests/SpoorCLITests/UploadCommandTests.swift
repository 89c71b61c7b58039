import Foundation
import SpoorWire
import SpoorModel
import SpoorTracker
import SpoorLog
import Testing

@Suite struct UploadCommandTests {
    /// A storage directory holding `count` events, as a tracker left it.
    static func storage(events count: Int) async throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-upload-cli-\(UUID().uuidString)")
        var configuration = Configuration(storageDirectory: directory)
        configuration.durability = .always
        let tracker = try Tracker(configuration: configuration)
        for n in 0..<count { tracker.track("Tap", properties: ["n": .int(Int64(n))]) }
        #expect(await tracker.shutdown(timeout: testBound))
        return directory
    }

    @Test func aClosedPortKeepsEveryBatchAndSaysWhy() async throws {
        let directory = try await Self.storage(events: 150)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A closed port refuses at once; the request timeout only bounds a hang (minutes, for a loaded machine).
        let result = try await SpoorProcess.run(["upload", directory.path, "--to", "http://127.0.0.1:1", "--timeout", "300"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("spoor upload: storage directory"))
        let lines = result.stdoutText.split(separator: "\n")
        // One attempt, for the first batch; the rest wait for the next run.
        #expect(lines.count == 2)
        #expect(lines[0].contains("100 events"))
        #expect(lines[0].contains("no answer  retryLater: network"))
        #expect(lines[1].contains("150 events pending"))
        // Nothing was lost, and inspect shows what the upload did.
        let inspect = try await SpoorProcess.run(["inspect", directory.path])
        #expect(inspect.status == 0)
        #expect(inspect.stdoutText.contains("sealed batches: 1, 100 records"))
        #expect(inspect.stdoutText.contains("live records: 50"))
        #expect(inspect.stdoutText.contains("upload (as last saved by the tracker): stopped"))
        #expect(inspect.stdoutText.contains("1 requests, 1 retried"))
    }

    @Test func rejectedBatchesShowInInspect() async throws {
        let directory = try await Self.storage(events: 3)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logDirectory = Tracker.logDirectory(in: directory)
        let area = try RejectedArea(logDirectory: logDirectory, limits: .init(maxBatches: 1, maxBytes: 1 << 20))
        let log = try EventLog(directory: logDirectory)
        let batch = try #require(try log.seal())
        let frame = try log.frame(of: batch.id)
        try area.setAside(frame: frame, id: .random(), status: 400, at: 1_700_000_000_000)
        try area.setAside(frame: frame, id: batch.id, status: 422, at: 1_700_000_000_001)
        log.close()
        let text = try await SpoorProcess.run(["inspect", directory.path])
        #expect(text.stdoutText.contains("rejected by the collector (rejected/): 1 batch, 1 older dropped to stay within the limits (counted)"))
        #expect(text.stdoutText.contains("\(batch.id)  zstd  3 records"))
        #expect(text.stdoutText.contains("refused with 422"))
        let json = try await SpoorProcess.run(["inspect", directory.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["rejected_dropped"] as? Int == 1)
        let rejected = try #require(object["rejected"] as? [[String: Any]])
        #expect(rejected.first?["status"] as? Int == 422)
    }

    @Test func usageErrors() async {
        #expect((try? await SpoorProcess.run(["upload", "/tmp", "--to", "ftp://x"]))?.status == 64)
        #expect((try? await SpoorProcess.run(["upload", "/tmp"]))?.status == 64)
        #expect((try? await SpoorProcess.run(["upload", "/nonexistent-\(UUID().uuidString)", "--to", "http://127.0.0.1:1"]))?.status == 66)
    }
}
