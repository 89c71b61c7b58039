import Foundation
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorModel
import Testing
import SpoorWire

@Suite("Hostile bodies on a real collector process", .timeLimit(.minutes(10)))
struct BadInputTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A zstd frame whose header declares 100 bytes but whose payload inflates to 1 GiB of zeros. `zstd` compresses
    /// the gigabyte in a process of its own, waited for off the cooperative pool.
    static func zstdBomb() async throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-bomb-\(UUID().uuidString).zst").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await Command.run("/bin/sh", ["-c", "head -c 1073741824 /dev/zero | zstd -q -c > '\(path)'"])
        let stored = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(stored.count > 1000 && stored.count < 1 << 20, "zstd made \(stored.count) bytes of a gigabyte of zeros")
        var frame = try BatchFrame.encode(payload: [UInt8](repeating: 0, count: 100), recordCount: 1, batchID: .random(),
                                          sealedAt: 0, codec: .none)
        frame.removeSubrange(BatchFrame.headerLength...)
        frame[5] = Codec.zstd.rawValue
        withUnsafeBytes(of: UInt32(stored.count).littleEndian) { frame.replaceSubrange(16..<20, with: $0) }
        let crc = CRC32C.checksum(Array(frame[0..<48]))
        withUnsafeBytes(of: crc.littleEndian) { frame.replaceSubrange(48..<52, with: $0) }
        return frame + stored
    }

    /// The stores the hostile bodies are sent to: SQLite, and a JetStream stream (one node) drained afterwards.
    enum Store: String, CaseIterable, Sendable {
        case sqlite, jetstream
    }

    @Test("truncated and random bodies, the frame fuzz corpus, a zstd bomb and a 100 MiB body: right status, nothing stored, RSS < 256 MiB",
          arguments: Store.allCases)
    func hostileBodies(store: Store) async throws {
        let cluster = store == .jetstream ? try await NATSCluster(size: 1) : nil
        let collector = try await CollectorProcess(
            store: cluster?.url(stream: "HOSTILE"), arguments: cluster == nil ? [] : ["--replicas", "1"]
        )
        // The request core decides each status in-process, over its own store; the server must
        // answer the same and end up holding the same events (valid corpus frames share batch ids).
        let oracleStore = try SQLiteStore(path: nil)
        let oracle = Ingest(store: oracleStore)
        var bodies: [(String, [UInt8])] = []
        let valid = try Frames.frame(Frames.events(50))
        for length in stride(from: 0, to: valid.count, by: max(1, valid.count / 40)) {
            bodies.append(("truncated to \(length)", Array(valid.prefix(length))))
        }
        var random = SplitMix64(seed: 0x5EED)
        for index in 0..<50 {
            let count = Int(random.next() % 4096)
            bodies.append(("random \(index)", (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        }
        let corpus = Self.repository.appendingPathComponent("Fuzz/Corpus/FuzzFrameDecoder")
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        #expect(!files.isEmpty)
        for file in files {
            bodies.append(("corpus \(file)", [UInt8](try Data(contentsOf: corpus.appendingPathComponent(file)))))
        }
        bodies.append(("zstd bomb", try await Self.zstdBomb()))
        for (label, body) in bodies {
            let expected = await oracle.handle(body, receivedAt: 0).status
            let answer = try await collector.request(body: body)
            #expect(answer.status == expected, "\(label): \(answer.body)")
            if expected != 200 { #expect(answer.body.hasPrefix(#"{"error":""#), "\(label)") }
        }
        let huge = [UInt8](repeating: 0xAB, count: 100 << 20)
        let hugeAnswer = try await collector.request(body: huge)
        #expect(hugeAnswer.status == 413)
        let health = try await collector.request("GET", "/healthz")
        #expect(health.status == 200)
        if let cluster {
            // What the stream holds, drained into SQLite.
            let drain = try LineProcess(try CollectorProcess.binary(), [
                "drain", "--from", cluster.url(stream: "HOSTILE"), "--store", "sqlite:\(collector.databasePath)", "--exit-when-drained",
            ])
            #expect(try await drain.exitStatus() == 0)
            await cluster.stop()
        }
        let stored = try SQLiteStore(path: collector.databasePath).countsByName().map(\.count).reduce(0, +)
        #expect(stored == (try oracleStore.countsByName().map(\.count).reduce(0, +)))
        let rss = try ProcessUsage.peakRSS(of: collector.pid)
        print("collector peak RSS after hostile bodies: \(rss >> 20) MiB")
        #expect(rss < 256 << 20)
    }
}
