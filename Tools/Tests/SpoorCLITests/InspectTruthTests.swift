import Foundation
import Testing
import SpoorModel
import SpoorWire
import SpoorLog

/// `spoor inspect` and the log's own counters agree on what recovery found.
@Suite("spoor inspect tells the truth about recovery")
struct InspectTruthTests {
    /// A log of 40 records, closed, with the payloads of records 5, 10 and 15 damaged on disk.
    static func damagedLog(insertingGarbage: Bool = false) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-truth-\(UUID().uuidString)")
        let log = try EventLog(directory: url)
        let encoder = EventEncoder()
        var buffer = RecordBuffer()
        for sequence in 0..<40 {
            try buffer.append(Event(name: "Tap", time: 1_700_000_000_000, sequence: UInt64(sequence), distinctID: "d", anonymousID: "a",
                                    lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code)), using: encoder)
        }
        log.append(buffer)
        log.close()
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: url.path).first { $0.hasPrefix("seg-") })
        let path = url.appendingPathComponent(segment)
        var bytes = [UInt8](try Data(contentsOf: path))
        let marker: [UInt8] = [0xF1, 0x5E, 0xC0, 0xDA]
        let starts = (0...(bytes.count - 4)).filter { Array(bytes[$0..<$0 + 4]) == marker }
        #expect(starts.count == 40)
        if insertingGarbage {
            // Too short for a padding record: recovery remembers it in the state file instead.
            bytes.insert(contentsOf: [0xEE, 0xEE, 0xEE, 0xEE, 0xEE], at: starts[5])
        } else {
            for record in [5, 10, 15] { bytes[starts[record] + 20] ^= 0xFF }
        }
        try Data(bytes).write(to: path)
        return url
    }

    @Test func afterAStartThatSkippedThreeRecordsTheCountersSayThree() async throws {
        let url = try Self.damagedLog()
        defer { try? FileManager.default.removeItem(at: url) }
        let log = try EventLog(directory: url)
        #expect(log.counters.corrupt == 3)
        log.close()

        let result = try await SpoorProcess.run(["inspect", url.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(LogReport.self, from: result.stdout)
        #expect(report.counters.corrupt == 3)
        #expect(report.liveRecords == 37)
        #expect(report.segments.map(\.skippedRegions) == [3])
        #expect(report.segments.map(\.corruptRegions) == [0])
        let text = try await SpoorProcess.run(["inspect", url.path]).stdoutText
        #expect(text.contains("corrupt 3,"), "\(text)")
        #expect(text.contains("37 records, 37 live, 3 corrupt regions skipped (counted)"), "\(text)")
    }

    @Test func whileTheLogIsOpenTheCountersStillSayThree() async throws {
        let url = try Self.damagedLog()
        defer { try? FileManager.default.removeItem(at: url) }
        let log = try EventLog(directory: url)
        defer { log.close() }
        #expect(log.counters.corrupt == 3)

        let result = try await SpoorProcess.run(["inspect", url.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(LogReport.self, from: result.stdout)
        #expect(report.inUse)
        #expect(report.counters.corrupt == 3)
        #expect(report.liveRecords == 37)
        #expect(report.segments.map(\.skippedRegions) == [3])
        #expect(report.segments.map(\.corruptRegions) == [0])
        let text = try await SpoorProcess.run(["inspect", url.path]).stdoutText
        #expect(text.contains("corrupt 3,"), "\(text)")
        #expect(text.contains("37 records, 37 live, 3 corrupt regions skipped (counted)"), "\(text)")
    }

    /// Before any start, the damage is what the next recovery will find, and said so.
    @Test func beforeAnyStartTheRegionsAreNotYetCounted() async throws {
        let url = try Self.damagedLog()
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try await SpoorProcess.run(["inspect", url.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(LogReport.self, from: result.stdout)
        #expect(report.counters.corrupt == 0)
        #expect(report.segments.map(\.corruptRegions) == [3])
        #expect(report.segments.map(\.skippedRegions) == [0])
        let text = try await SpoorProcess.run(["inspect", url.path]).stdoutText
        #expect(text.contains("3 corrupt regions not yet recovered"), "\(text)")
    }

    /// A region too short to pad over stays in the file; once a start counted it, it is shown as counted.
    @Test func aShortRegionCountedByAStartIsNotShownAsNew() async throws {
        let url = try Self.damagedLog(insertingGarbage: true)
        defer { try? FileManager.default.removeItem(at: url) }
        let before = try JSONDecoder().decode(LogReport.self, from: try await SpoorProcess.run(["inspect", url.path, "--json"]).stdout)
        #expect(before.segments.map(\.corruptRegions) == [1])
        let log = try EventLog(directory: url)
        #expect(log.counters.corrupt == 1)
        log.close()
        let after = try JSONDecoder().decode(LogReport.self, from: try await SpoorProcess.run(["inspect", url.path, "--json"]).stdout)
        #expect(after.counters.corrupt == 1)
        #expect(after.segments.map(\.corruptRegions) == [0])
        #expect(after.segments.map(\.skippedRegions) == [1])
        #expect(after.liveRecords == 40)
    }
}
