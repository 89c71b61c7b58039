import Foundation
import Logging
import SpoorLog
import SpoorModel
import SpoorSystem
import SpoorTestSupport
import SpoorTesting
import SpoorUpload
import SpoorWire
import Testing

/// An uploader over a process's log in a shared storage directory sends what other processes left: the batches of a
/// gone process's log, claimed, each exactly once, before its own records; a refused one goes to the shared
/// rejected area (docs/event-log.md, "Several processes").
@Suite struct SharedUploadTests {
    let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test func anUploaderSendsTheBatchesAGoneProcessLeftThenItsOwn() async throws {
        let storage = TemporaryDirectory()
        let configuration = EventLog.Configuration(durability: .none)
        let gone = try EventLog.openShared(storageDirectory: storage.url, configuration: configuration, logger: quiet)
        gone.append(SequencedEvents.buffer(0..<250))
        gone.close()
        let log = try EventLog.openShared(storageDirectory: storage.url, configuration: configuration, logger: quiet)
        log.append(SequencedEvents.buffer(250..<300))

        // The second of the gone process's batches is refused for good: it goes to the area the processes share.
        let client = ScriptedHTTPClient([.respond(200), .respond(400, body: #"{"error":"bad"}"#)])
        var upload = UploadConfiguration(url: URL(string: "http://collector.test/v1/batch")!, token: nil)
        upload.client = client
        upload.clock = ManualClock()
        upload.flushInterval = nil
        upload.networkMonitor = nil
        upload.maxBatchesInFlight = 1
        let uploader = try Uploader(log: log, configuration: upload, logger: quiet)
        uploader.start(sendingLeftovers: false)
        let result = await uploader.flush()
        #expect(result.isComplete)

        let sent = try client.requests.map { try SequencedEvents.sequences(inBatch: FrameDecoder().decode($0.body).payload) }
        #expect(sent.count == 4)
        #expect(Set(sent.prefix(3).flatMap { $0 }) == Set(0..<250), "the gone process's batches go first")
        #expect(sent.last == Array(250..<300))
        #expect(Set(client.requests.compactMap { request in request.headers.first { $0.name == "Spoor-Batch-Id" }?.value }).count == 4)
        #expect(log.counters.claimed == 3)
        let rejected = RejectedArea.summary(logDirectory: storage.url.appendingPathComponent(StorageLayout.logsFolderName))
        #expect(rejected.entries.count == 1)
        await uploader.stop()
        log.close()
    }
}
