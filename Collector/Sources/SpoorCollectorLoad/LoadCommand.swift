import ArgumentParser
import Foundation
import ServiceLifecycle
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorLoopback
import SpoorModel
import SpoorSystem
import SpoorWire
import SpoorWorkload
import Synchronization

/// `spoor-collector-load`: C concurrent clients posting realistic zstd frames to a real collector on loopback,
/// once per store, next to the rate at which this process decodes the same frames. `scripts/collector-load` runs it.
@main
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spoor-collector-load",
        abstract: "Measures spoor-collector: batches/s, events/s, latency and peak RSS per store, and the decode-only rate."
    )

    @Option(help: "The spoor-collector binary to start.")
    var collector: String

    @Option(name: .customLong("store"), help: """
        A store to measure (repeat): sqlite:PATH, postgres://USER@HOST:PORT/DB, or jetstream: a 3-node cluster this \
        tool starts, then drained into SQLite.
        """)
    var stores: [String] = []

    @Option(name: .customLong("decode-passes"), help: "Times the decode-only rate goes over the frames (for profiling).")
    var decodePasses = 1

    @Option(help: "Concurrent clients, each with one keep-alive connection.")
    var clients = 8

    @Option(help: "Batches posted per store.")
    var batches = 2000

    @Option(name: .customLong("events"), help: "Events per batch.")
    var eventsPerBatch = 100

    @Option(help: "Workload seed.")
    var seed: UInt64 = 1

    @Option(name: .customLong("collector-arg"), parsing: .unconditionalSingleValue, help: "An extra argument for `serve` (repeat).")
    var collectorArguments: [String] = []

    func run() async throws {
        guard clients > 0, batches > 0, eventsPerBatch > 0 else { throw ValidationError("counts must be positive") }
        var frames = try makeFrames(count: batches + 1)
        let warmup = frames.removeLast()
        let bytes = frames.map(\.count).reduce(0, +)
        print("\(batches) frames of \(eventsPerBatch) events (iPhone app and Linux service workloads, zstd), "
            + "\(bytes / batches) bytes each on average; \(clients) clients")

        var decodeSeconds = 0.0
        for _ in 0..<decodePasses { decodeSeconds += try await decodeOnly(frames) }
        decodeSeconds /= Double(decodePasses)
        let total = Double(batches * eventsPerBatch)
        let stages = try stageSeconds(frames)
        print(String(format: "per event: frame (CRC, zstd) %.2f µs, events (validate, views) %.2f µs, rows %.2f µs",
                     stages.frame / total * 1e6, stages.views / total * 1e6, (decodeSeconds - stages.frame - stages.views) / total * 1e6))
        let insertSeconds = try await sqliteInsertOnly(frames)
        print(String(format: "SQLite alone, this process: %.2f µs per event inserting the rows in groups of %d batches (no HTTP, no decoding)",
                     insertSeconds / total * 1e6, clients))
        print("decode: this process on one thread, frame → rows, no HTTP, no store; cores: the collector's CPU time / wall time")
        print(Self.row("store", "batches/s", "events/s", "p50 ms", "p99 ms", "peak RSS", "cores", "group ev", "commit ms"))
        print(Self.row("decode", Self.rate(Double(batches) / decodeSeconds), Self.rate(total / decodeSeconds), "-", "-", "-", "1"))
        for store in stores {
            if store == "jetstream" {
                try await measureJetStream(frames: frames, warmup: warmup)
                continue
            }
            let result = try await runLoad(store: store, frames: frames, warmup: warmup)
            printRow(store.hasPrefix("postgres") ? "postgresql" : "sqlite", result)
        }
    }

    func printRow(_ label: String, _ result: LoadResult) {
        let total = Double(batches * eventsPerBatch)
        print(Self.row(
            label, Self.rate(Double(batches) / result.seconds), Self.rate(total / result.seconds),
            result.latencies.isEmpty ? "-" : String(format: "%.2f", result.percentile(0.50) * 1000),
            result.latencies.isEmpty ? "-" : String(format: "%.2f", result.percentile(0.99) * 1000),
            "\(result.peakRSS >> 20) MiB", String(format: "%.2f", result.cpuSeconds / result.seconds),
            result.groups.map { String(format: "%.0f", $0.events) } ?? "-",
            result.groups.map { String(format: "%.2f", $0.commitSeconds * 1000) } ?? "-"
        ))
    }

    /// A 3-node JetStream cluster on this machine (stream R3): the rate collectors accept at, then the rate one drain
    /// moves the stream into SQLite.
    func measureJetStream(frames: [[UInt8]], warmup: [UInt8]) async throws {
        let cluster = try await NATSCluster(size: 3)
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-load-drain-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
        do {
            let url = cluster.url(stream: "SPOOR")
            printRow("jetstream", try await runLoad(store: url, frames: frames, warmup: warmup))
            let drain = try LineProcess(URL(fileURLWithPath: collector), ["drain", "--from", url, "--store", "sqlite:\(database)"])
            let start = ContinuousClock.now
            let expected = "drained \(frames.count + 1) batches"
            _ = try await drain.line(timeout: .seconds(600)) { $0.hasPrefix(expected) }
            let seconds = (ContinuousClock.now - start).timeInterval
            printRow("drain→sqlite", LoadResult(
                seconds: seconds, latencies: [], peakRSS: try ProcessUsage.peakRSS(of: drain.pid),
                cpuSeconds: try ProcessUsage.cpuSeconds(of: drain.pid), groups: nil
            ))
            try await drain.stop()
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    static func rate(_ value: Double) -> String { String(Int(value.rounded())) }

    /// A table row: the first column left-aligned, the others right-aligned.
    static func row(_ first: String, _ others: String...) -> String {
        first.padding(toLength: 13, withPad: " ", startingAt: 0)
            + others.map { String(repeating: " ", count: max(0, 11 - $0.count)) + $0 }.joined()
    }

    /// Realistic events, half from a phone app and half from a Linux service, sealed as zstd frames.
    func makeFrames(count: Int) throws -> [[UInt8]] {
        var phone = Workload(.iPhoneApp, seed: seed)
        var service = Workload(.linuxService, seed: seed &+ 1)
        let encoder = EventEncoder()
        return try (0..<count).map { index in
            let events = index.isMultiple(of: 2) ? phone.events(eventsPerBatch) : service.events(eventsPerBatch)
            var payload: [UInt8] = []
            for event in events { try encoder.appendBatchEntry(event, to: &payload) }
            return try BatchFrame.encode(payload: payload, recordCount: events.count, batchID: .random(),
                                         sealedAt: 1_763_769_600_123, codec: .zstd)
        }
    }

    /// Seconds this process takes, on one thread, to turn every frame into rows as the collector does
    /// (frame check, zstd, protobuf, rows with their JSON), with no HTTP and no store.
    func decodeOnly(_ frames: [[UInt8]]) async throws -> Double {
        let ingest = Ingest(store: DiscardingStore())
        let start = ContinuousClock.now
        for frame in frames {
            let answer = await ingest.handle(frame, receivedAt: 0)
            guard answer.status == 200 else { throw ValidationError("decode failed: \(answer.body)") }
        }
        return (ContinuousClock.now - start).timeInterval
    }

    /// Seconds for the frames alone (header, CRC, decompression) and for the events' views without rows.
    func stageSeconds(_ frames: [[UInt8]]) throws -> (frame: Double, views: Double) {
        let frameDecoder = FrameDecoder(limits: FrameLimits(maxFrameBytes: 4 << 20, maxUncompressedBytes: 64 << 20, maxRecords: 1_000_000))
        var start = ContinuousClock.now
        let payloads = try frames.map { try frameDecoder.decode($0).payload }
        let frameSeconds = (ContinuousClock.now - start).timeInterval
        let decoder = EventDecoder()
        var count = 0
        start = ContinuousClock.now
        for payload in payloads {
            try payload.withUnsafeBytes { raw in
                try Result { () throws(DecodeError) in try decoder.forEachEventView(inBatch: raw) { _ in count += 1 } }.get()
            }
        }
        return (frameSeconds, (ContinuousClock.now - start).timeInterval)
    }

    /// Seconds to insert the frames' rows into a new SQLite file in groups of `clients` batches, as the collector's
    /// group commit does under this load, with nothing else in the way.
    func sqliteInsertOnly(_ frames: [[UInt8]]) async throws -> Double {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-load-insert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("events.sqlite").path)
        let ingest = Ingest(store: store)
        let records = try frames.map { frame in
            switch ingest.decode(frame, receivedAt: 0) {
            case .success(let decoded): return decoded.0
            case .failure(let answer): throw ValidationError("decode failed: \(answer.body)")
            }
        }
        let start = ContinuousClock.now
        for group in stride(from: 0, to: records.count, by: clients) {
            _ = try await store.insertGroup(Array(records[group..<min(group + clients, records.count)]))
        }
        return (ContinuousClock.now - start).timeInterval
    }

    /// Starts a collector on `store`, posts every frame from `clients` connections, and stops it.
    func runLoad(store: String, frames: [[UInt8]], warmup frame: [UInt8]) async throws -> LoadResult {
        let server = try await CollectorUnderLoad(
            binary: collector,
            arguments: ["serve", "--listen", "127.0.0.1:0", "--store", store, "--max-in-flight", "1024"] + collectorArguments
        )
        do {
            let result = try await measure(server, store: store, frames: frames, warmup: frame)
            try await server.stop()
            return result
        } catch {
            _ = try? await server.stop()
            throw error
        }
    }

    /// Posts every frame to `server` from `clients` connections, on threads of their own.
    func measure(_ server: CollectorUnderLoad, store: String, frames: [[UInt8]], warmup frame: [UInt8]) async throws -> LoadResult {
        // A first batch creates the tables and opens connections before the clock starts.
        let port = server.port
        let warmedUp = try await onThreadOfItsOwn { () throws -> Bool in
            let warmup = try BatchPoster(port: port)
            defer { warmup.close() }
            return try warmup.post(frame).status == 200
        }
        guard warmedUp else { throw ValidationError("the warm-up batch failed") }

        let next = NextIndex()
        let cpuBefore = try server.cpuSeconds()
        let start = ContinuousClock.now
        let clientResults = await onThreadsOfTheirOwn(clients) { _ in
            var result = ClientResult()
            do {
                let client = try BatchPoster(port: port)
                defer { client.close() }
                while let index = next.take(below: frames.count) {
                    let sent = ContinuousClock.now
                    let answer = try client.post(frames[index])
                    result.latencies.append((ContinuousClock.now - sent).timeInterval)
                    if answer.status != 200 || !answer.body.hasSuffix(#""duplicate":false}"#) {
                        result.failures.append("\(answer.status) \(answer.body)")
                    }
                }
            } catch {
                result.failures.append("\(error)")
            }
            return result
        }
        let seconds = (ContinuousClock.now - start).timeInterval
        let failures = clientResults.flatMap(\.failures)
        guard failures.isEmpty else {
            throw ValidationError("\(failures.count) batches failed on \(store), first: \(failures[0])")
        }
        let events = try server.histogram("spoor_collector_group_events")
        let commits = try server.histogram("spoor_collector_commit_seconds")
        return LoadResult(
            seconds: seconds, latencies: clientResults.flatMap(\.latencies).sorted(), peakRSS: try server.peakRSS(),
            cpuSeconds: try server.cpuSeconds() - cpuBefore,
            groups: events.count > 0 ? (events.sum / events.count, commits.sum / max(commits.count, 1)) : nil
        )
    }
}

/// What one store's run measured.
struct LoadResult {
    var seconds: Double
    var latencies: [Double]
    var peakRSS: Int
    var cpuSeconds: Double
    /// Mean events per group commit and seconds per commit, from the collector's `/metrics` (SQL stores).
    var groups: (events: Double, commitSeconds: Double)?

    func percentile(_ fraction: Double) -> Double {
        latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
    }
}

/// One client thread's latencies and failures, returned when it ends.
struct ClientResult: Sendable {
    var latencies: [Double] = []
    var failures: [String] = []
}

/// The next frame to send, shared by the client threads.
final class NextIndex: Sendable {
    private let value = Atomic<Int>(0)

    func take(below limit: Int) -> Int? {
        let index = value.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < limit ? index : nil
    }
}

/// A store that keeps nothing, for the decode-only rate; it holds nothing in the background to run.
struct DiscardingStore: BatchStore {
    func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult { .stored }
    func ping() async throws(StoreUnavailable) {}
    func run() async { try? await gracefulShutdown() }
}
