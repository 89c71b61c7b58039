import Foundation
import Testing
import SpoorWire
import SpoorLog
import SpoorTestSupport

/// A log released without `close()` forces nothing to disk in its `deinit`, yet a process that goes on keeps
/// everything: the directory is free again and the records, batches and head are where they were.
@Suite struct ReleaseWithoutCloseTests {
    @Test(arguments: [Durability.none, .always]) func aReleasedLogLeavesItsDirectoryWhole(_ durability: Durability) throws {
        let directory = TemporaryDirectory()
        let releasedID: BatchID
        let keptID: BatchID
        do {
            let log = try open(directory, .init(durability: durability))
            log.append(Fixtures.buffer(0..<250))
            releasedID = try #require(try log.seal()).id
            keptID = try #require(try log.seal()).id
            try log.release(releasedID)
            log.append(Fixtures.buffer(250..<260))
        }
        let reopened = try open(directory)
        #expect(reopened.pendingBatches().map(\.id) == [keptID])
        #expect(Fixtures.sequences(reopened) == Array(200..<260))
        #expect(reopened.counters.sealed == 2)
        #expect(reopened.counters.released == 1)
        reopened.close()
    }
}
