import Foundation
import Testing
import SpoorLog
import SpoorTestSupport

@Suite struct LogInspectionTests {
    @Test func reportsWhatRecoveryWouldFindWithoutChangingAnything() throws {
        let directory = TemporaryDirectory()
        do {
            let log = try open(directory, .init(maxRecords: 200))
            log.append(Fixtures.buffer(0..<250))
            try log.seal(maxRecords: 30, codec: .gzip)
            log.close()
        }
        // Damage: one corrupt record in the middle, a torn tail, and a stranger.
        let segment = try #require(directory.segmentPaths().last)
        var bytes = FileHandle.bytes(segment)
        bytes[bytes.count / 2] ^= 0xFF
        writeBytes(Array(bytes.dropLast(10)), to: segment)
        writeBytes(Array("x".utf8), to: directory.path + "/README")
        let before = directory.names().map { FileHandle.bytes(directory.path + "/" + $0) }

        let report = try EventLog.inspect(directory: directory.url)
        #expect(!report.inUse)
        #expect(report.stateFile == "ok")
        #expect(report.counters.dropped == 50)
        #expect(report.counters.sealed == 1)
        #expect(report.batches.count == 1)
        #expect(report.batches.first?.records == 30)
        #expect(report.batches.first?.codec == "gzip")
        #expect(report.foreign == ["README"])
        #expect(report.segments.map(\.corruptRegions).reduce(0, +) == 1)
        #expect(report.segments.last?.tailIsTorn == true)
        // 250 appended, 50 dropped, 30 sealed; one corrupt and one torn record fall out.
        #expect(report.liveRecords == 250 - 50 - 30 - 2)
        #expect(directory.names().map { FileHandle.bytes(directory.path + "/" + $0) } == before)

        let log = try open(directory)
        #expect(log.recordCount == report.liveRecords)
        #expect(log.counters.corrupt == 1)
    }

    @Test func seesThatAnotherLogHasTheDirectoryOpen() throws {
        let directory = TemporaryDirectory()
        let log = try open(directory)
        #expect(try EventLog.inspect(directory: directory.url).inUse)
        log.close()
        #expect(try !EventLog.inspect(directory: directory.url).inUse)
    }

    @Test func aMissingDirectoryIsATypedError() {
        #expect(throws: StorageError.self) { try EventLog.inspect(directory: URL(fileURLWithPath: "/nonexistent/spoor")) }
    }
}
