import Foundation
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorSystem
import Testing

@Suite("The drain: what it cannot decode goes to the dead-letter subject, never dropped")
struct DeadLetterTests {
    @Test("A batch the collector took but the drain cannot decode (a larger --max-decompressed) is moved to STREAM.dead and counted; the rest is stored once")
    func deadLetter() async throws {
        let cluster = try await NATSCluster(size: 1)
        do {
            try await Self.deadLetter(url: cluster.url(stream: "SKEW"))
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    static func deadLetter(url: String) async throws {
        // The collector takes payloads up to 8 MiB; the drain, an older or stricter one, up to 1 MiB.
        let collector = try await CollectorProcess(store: url, arguments: ["--replicas", "1", "--max-decompressed", String(8 << 20)])
        let small = try Frames.frame(Frames.events(5))
        let large = try await onThreadOfItsOwn { () throws in try HostileClientTests.largeFrame(payloadBytes: 2 << 20) }
        #expect(try await collector.request(body: small).status == 200)
        #expect(try await collector.request(body: large).status == 200)
        let database = collector.directory.appendingPathComponent("drained.sqlite").path
        let drain = try LineProcess(try CollectorProcess.binary(), [
            "drain", "--from", url, "--store", "sqlite:\(database)", "--max-decompressed", String(1 << 20), "--exit-when-drained",
        ])
        #expect(try await drain.exitStatus() == 0)
        let last = try #require(drain.output.last { $0.hasPrefix("drained ") })
        #expect(last.hasSuffix("1 dead-lettered"), "\(last)")
        #expect(try SQLiteStore(path: database).countsByName().map(\.count).reduce(0, +) == 5)
        // Run again: nothing comes back (the dead letter was acknowledged, and the drain does not read STREAM.dead).
        let again = try LineProcess(try CollectorProcess.binary(), [
            "drain", "--from", url, "--store", "sqlite:\(database)", "--max-decompressed", String(1 << 20), "--exit-when-drained",
        ])
        #expect(try await again.exitStatus() == 0)
        #expect(!again.output.contains { $0.contains("dead-lettered") && !$0.hasSuffix(" 0 dead-lettered") })
    }
}
