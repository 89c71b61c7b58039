import Foundation
import SpoorWire
import SpoorModel
import SpoorTracker
import SpoorLog
import SpoorTooling
import Testing

@Suite struct UploadCommandTests {
    /// A storage directory holding `count` events, as a tracker left it.
    static func storage(events count: Int) async throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-upload-cli-\(UUID().uuidString)")
        var configuration = Configuration(storageDirectory: directory)
        configuration.storage.durability = .always
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
        // The first batch (100 events) is tried, and the second (50) too if it was sealed and sent within the
        // window before the refusal came back; after a failure nothing more goes. Every attempt line says why.
        let attempts = lines.dropLast()
        #expect((1...2).contains(attempts.count), "\(lines)")
        #expect(attempts.first?.contains("100 events") == true)
        #expect(attempts.allSatisfy { $0.contains("no answer  retryLater: network") }, "\(lines)")
        #expect(lines.last?.contains("150 events pending") == true)
        // Nothing was lost, and inspect shows what the upload did: the attempts, each counted once.
        let inspect = try await SpoorProcess.run(["inspect", directory.path])
        #expect(inspect.status == 0)
        // The second batch may have been sealed and then held back by the failure: sealed or live, all 150 stay.
        // The upload adopted the tracker's log (closed) and claimed its batches: every log's lines add up.
        let text = inspect.stdoutText
        let sealed = Self.sums(onTheLinesOf: "sealed batches: ", in: text)
        let live = Self.sums(onTheLinesOf: "live records: ", in: text)
        #expect(sealed.count == 2 && sealed[0] >= attempts.count, "\(text)")
        #expect(sealed.count == 2 && live.count >= 1 && sealed[1] + live[0] == 150, "\(text)")
        #expect(inspect.stdoutText.contains("upload (as last saved by the tracker): stopped"))
        #expect(inspect.stdoutText.contains("\(attempts.count) requests, \(attempts.count) retried"))
    }

    /// The whole numbers on each line of `text` that contains `label`, added up position by position ("sealed
    /// batches: 2, 150 records" and "sealed batches: 1, 50 records" give [3, 200]).
    static func sums(onTheLinesOf label: String, in text: String) -> [Int] {
        var sums: [Int] = []
        for line in text.split(separator: "\n") where line.contains(label) {
            for (index, number) in line.split(whereSeparator: { !$0.isNumber }).compactMap({ Int($0) }).enumerated() {
                if index < sums.count { sums[index] += number } else { sums.append(number) }
            }
        }
        return sums
    }

    @Test func rejectedBatchesShowInInspect() async throws {
        let directory = try await Self.storage(events: 3)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The rejected area the processes share, in the `logs` folder; the batch from the tracker's own log.
        let area = try RejectedArea(logDirectory: Tracker.logDirectory(in: directory), limits: .init(maxBatches: 1, maxBytes: 1 << 20))
        let log = try EventLog(directory: try #require(try StorageInspection.inspect(directory).logs.first).directory)
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
