import Foundation
import GRDB
import SpoorCollectorTestSupport
import SpoorFaultProxy
import SpoorLoopback
import SpoorModel
import SpoorSystem
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Exactly-once delivery under kill -9: a child tracks and uploads continuously through the proxy to a real
/// collector; it is SIGKILLed round after round, each time after a random number of its own `durable` lines (so the
/// kill lands wherever the child happens to be, on any machine, and every round has made events durable), while
/// the collector is also restarted at random (gracefully or with SIGKILL) and the proxy answers some requests with
/// a 5xx, a 429, a reset or a lost response. At the end every event the child reported durable is in the store
/// exactly once, and no (anonymous id, sequence) pair is stored twice.
///
/// `SPOOR_E2E_ROUNDS` (default 20) and `SPOOR_E2E_SEED` pick the run; `make e2e-crash ROUNDS=200` is the long one.
@Suite("kill -9 rounds against a real collector", .timeLimit(.minutes(10)))
struct KillRoundsTests {
    @Test("every event reported durable is stored exactly once through SIGKILLs and collector restarts")
    func durableEventsSurviveKillsExactlyOnce() async throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = environment["SPOOR_E2E_ROUNDS"].flatMap { Int($0) } ?? 20
        let seed = environment["SPOOR_E2E_SEED"].flatMap { UInt64($0) } ?? 20_261_123
        var random = SplitMix64(seed: seed)
        let started = ContinuousClock.now

        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port)
        defer { proxy.stop() }
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }

        var durable = Set<Int64>()
        var durableRounds = 0
        var restarts = 0
        var transcript: [String] = []
        // The log's drop-oldest count as the child last reported it (the child stays far below the caps).
        var maxDropped = 0
        for round in 0..<rounds {
            // Most requests go through; some meet a 5xx, a 429, a reset or a lost response.
            proxy.setScript(FaultScript((0..<400).map { _ in Self.randomAction(using: &random) }))
            let child = try Self.child(storage: storage, url: proxy.batchURL, round: round)
            _ = try await child.line { $0.hasPrefix("ready") }
            // The kill comes after 1 to 8 `durable` lines; in one round of three the collector restarts first, after
            // fewer of them.
            let lifetime = Int.random(in: 1...8, using: &random)
            var next = 0
            var counted = 0
            if Int.random(in: 0..<3, using: &random) == 0 {
                let before = Int.random(in: 0..<lifetime, using: &random)
                next = try await Self.durableLines(before, of: child, from: next)
                counted = before
                proxy.upstreamPort = nil
                proxy.upstreamPort = try await collector.restart(kill: Bool.random(using: &random))
                restarts += 1
            }
            _ = try await Self.durableLines(lifetime - counted, of: child, from: next)
            try await child.stop(signal: SIGKILL)
            let lines = child.output
            transcript.append("round \(round) killed after \(lifetime) durable lines")
            transcript += lines
            for line in lines where line.hasPrefix("flushed ") {
                if let dropped = line.split(separator: " ").last?.split(separator: "=").last.flatMap({ Int($0) }) {
                    maxDropped = max(maxDropped, dropped)
                }
            }
            var madeDurable = 0
            for line in lines where line.hasPrefix("durable ") {
                let parts = line.split(separator: " ")
                guard parts.count == 3, let first = Int64(parts[1]), let last = Int64(parts[2]), first <= last,
                      first / 1_000_000 == round, last / 1_000_000 == round else {
                    Issue.record("a garbled line from the child of round \(round): \(line)")
                    continue
                }
                durable.formUnion(first...last)
                madeDurable += Int(last - first + 1)
            }
            if madeDurable > 0 { durableRounds += 1 }
        }

        // A last launch with the collector up and no faults sends whatever the rounds left behind.
        proxy.setScript(.passThrough)
        let drain = try Self.child(storage: storage, url: proxy.batchURL, round: rounds, drain: true)
        let status = try await drain.exitStatus()
        let drainLines = drain.output
        #expect(status == 0, "the drain failed: \(drainLines.suffix(5))")

        let stored = try StoredNumbers(path: collector.databasePath)
        let lost = durable.subtracting(stored.counts.keys)
        let repeated = stored.counts.filter { $0.value > 1 }
        #expect(lost.isEmpty, "durable but not stored: \(lost.sorted().prefix(20))")
        #expect(repeated.isEmpty, "stored more than once: \(repeated.keys.sorted().prefix(20))")
        #expect(stored.repeatedPairs == 0, "(anonymous id, sequence) pairs stored more than once")
        #expect(durableRounds == rounds, "every round made events durable: \(durableRounds) of \(rounds) did")
        #expect(maxDropped == 0, "the log dropped events at its caps: the check would not mean much")
        if !lost.isEmpty || !repeated.isEmpty || stored.repeatedPairs > 0 {
            // Keep what a person needs to find out why: the storage, the store, the requests, the child's lines.
            let keep = URL(fileURLWithPath: "/tmp/spoor-e2e-failure-\(seed)-\(rounds)")
            try? FileManager.default.removeItem(at: keep)
            try FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: storage, to: keep.appendingPathComponent("storage"))
            try FileManager.default.copyItem(at: collector.directory, to: keep.appendingPathComponent("collector"))
            try proxy.requests.map(\.description).joined(separator: "\n")
                .write(to: keep.appendingPathComponent("requests.txt"), atomically: true, encoding: .utf8)
            try (transcript + ["drain"] + drainLines).joined(separator: "\n")
                .write(to: keep.appendingPathComponent("child.txt"), atomically: true, encoding: .utf8)
            print("e2e crash: the evidence is in \(keep.path)")
        }
        try await collector.stop()
        let seconds = (ContinuousClock.now - started).timeInterval
        // Batches the collector took more than once (stored, then sent again after a kill): the duplicate case.
        let forwarded = proxy.requests.filter { $0.upstreamStatus == 200 }.compactMap(\.batchID)
        let resent = Dictionary(grouping: forwarded, by: { $0 }).values.filter { $0.count > 1 }.count
        print("""
            e2e crash: rounds=\(rounds) seed=\(seed) durable=\(durable.count) stored=\(stored.counts.count) \
            lost=\(lost.count) dropped=\(maxDropped) duplicates=\(repeated.count) repeated-pairs=\(stored.repeatedPairs) \
            collector-restarts=\(restarts) faults=\(proxy.requests.filter { $0.action != .forward }.count) requests=\(proxy.requests.count) batches=\(stored.batches) \
            resent-batches=\(resent) anonymous-ids=\(stored.anonymousIDs) time=\(String(format: "%.1f", seconds))s
            """)
    }
}

extension KillRoundsTests {
    /// A `SpoorUploadChild` for `round` (or the final drain), tracking and uploading through `url`.
    /// With `takingCommands`, it reads commands from its standard input (`send`).
    static func child(storage: URL, url: URL, round: Int, drain: Bool = false, takingCommands: Bool = false) throws -> LineProcess {
        var environment: [String: String]?
        if takingCommands {
            environment = ProcessInfo.processInfo.environment
            environment?["SPOOR_UPLOAD_CHILD_COMMANDS"] = "1"
        }
        return try LineProcess(
            CollectorProcess.builtProduct("SpoorUploadChild", override: "SPOOR_UPLOAD_CHILD_BIN"),
            [storage.path, url.absoluteString, "\(round)"] + (drain ? ["drain"] : []),
            input: takingCommands, environment: environment
        )
    }

    /// Waits for `count` more `durable` lines of `child`, from line `start` on; returns the index after the last.
    static func durableLines(_ count: Int, of child: LineProcess, from start: Int) async throws -> Int {
        var next = start
        for _ in 0..<count {
            next = try await child.line(from: next) { $0.hasPrefix("durable ") }.index + 1
        }
        return next
    }

    /// One request's fate: forwarded four times in five, else a transient fault (never a stall: the child's
    /// request timeout would only slow the rounds down).
    static func randomAction(using random: inout SplitMix64) -> FaultAction {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: .respond(status: 500)
        case 1: .respond(status: 503, headers: ["Retry-After": "0"])
        case 2: .respond(status: 429)
        case 3: .resetMidBody
        default: Int.random(in: 0..<4, using: &random) == 0 ? .loseResponse : .forward
        }
    }
}

/// The `n` numbers in the store and how often each appears.
struct StoredNumbers {
    var counts: [Int64: Int] = [:]
    var repeatedPairs = 0
    var batches = 0
    var anonymousIDs = 0

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.read { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT json_extract(properties, '$.n') AS n, COUNT(*) AS c FROM events WHERE name = 'KillRound' GROUP BY 1
                """) {
                counts[row["n"]] = row["c"]
            }
            repeatedPairs = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM (SELECT 1 FROM events GROUP BY anonymous_id, sequence HAVING COUNT(*) > 1)
                """) ?? 0
            batches = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM batches") ?? 0
            anonymousIDs = try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT anonymous_id) FROM events") ?? 0
        }
    }
}
