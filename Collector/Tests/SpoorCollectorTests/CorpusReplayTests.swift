import Foundation
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import Testing

@Suite("The FuzzCollectorIngest corpus, replayed through the request core", .timeLimit(.minutes(10)))
struct CorpusReplayTests {
    @Test("every corpus input gets a defined status; a 200 stores its events once, anything else stores nothing")
    func replay() async throws {
        let corpus = BadInputTests.repository.appendingPathComponent("Fuzz/Corpus/FuzzCollectorIngest")
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        #expect(!files.isEmpty)
        let store = try SQLiteStore(path: nil)
        let ingest = Ingest(limits: IngestLimits(maxBody: 1 << 20, maxDecompressed: 1 << 20), store: store)
        func stored() throws -> Int { try store.countsByName().map(\.count).reduce(0, +) }
        for file in files {
            let body = Frames.body(forFuzzInput: [UInt8](try Data(contentsOf: corpus.appendingPathComponent(file))))
            let before = try stored()
            let answer = await ingest.handle(body, receivedAt: 0)
            #expect([200, 400, 413, 415].contains(answer.status), "\(file): \(answer.body)")
            let added = try stored() - before
            #expect(added == (answer.status == 200 ? answer.storedEventCount : 0), "\(file)")
            if answer.status == 200 {
                let again = await ingest.handle(body, receivedAt: 0)
                #expect(again.duplicate && again.status == 200, "\(file)")
            }
        }
    }
}
