import Foundation
import Testing
import SpoorModel
import SpoorWire
import SpoorLog

/// Runs the built `spoor` with `arguments`; returns its status, standard output and standard error.
private func runSpoor(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
    let result = try await SpoorProcess.run(arguments)
    return (result.status, result.stdoutText, result.stderr)
}

@Suite struct InspectCommandTests {
    static func storage() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-inspect-\(UUID().uuidString)")
        let log = try EventLog(directory: url)
        let encoder = EventEncoder()
        var buffer = RecordBuffer()
        for sequence in 0..<40 {
            try buffer.append(Event(name: "Tap", time: 1_700_000_000_000, sequence: UInt64(sequence), distinctID: "d", anonymousID: "a",
                                    lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code)), using: encoder)
        }
        log.append(buffer)
        try log.seal(maxRecords: 15, codec: .zstd)
        log.close()
        return url
    }

    @Test func printsSegmentsBatchesAndCounters() async throws {
        let url = try Self.storage()
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try await runSpoor(["inspect", url.path])
        #expect(result.status == 0)
        #expect(result.output.contains("live records: 25"))
        #expect(result.output.contains("sealed batches: 1, 15 records"))
        #expect(result.output.contains("zstd  15 records"))
        #expect(result.output.contains("dropped 0, corrupt 0"))
    }

    @Test func jsonIsForScripts() async throws {
        let url = try Self.storage()
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try await runSpoor(["inspect", url.path, "--json"])
        #expect(result.status == 0)
        let report = try JSONDecoder().decode(LogReport.self, from: Data(result.output.utf8))
        #expect(report.liveRecords == 25)
        #expect(report.batches.map(\.records) == [15])
        #expect(report.counters.sealed == 1)
    }

    @Test func badArgumentsAndMissingDirectoriesFailClearly() async throws {
        let usage = try await runSpoor(["inspect"])
        #expect(usage.status == 64)
        #expect(usage.errors.hasPrefix("spoor inspect: "), "\(usage.errors)")
        #expect(usage.errors.contains("Usage: spoor inspect <dir>"), "\(usage.errors)")
        let missing = try await runSpoor(["inspect", "/nonexistent/spoor"])
        #expect(missing.status == 66)
        #expect(missing.errors.contains("not a directory"))
    }
}
