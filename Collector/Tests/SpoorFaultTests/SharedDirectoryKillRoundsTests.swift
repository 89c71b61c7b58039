import Foundation
import GRDB
import SpoorCollectorTestSupport
import SpoorFaultProxy
import SpoorLoopback
import SpoorModel
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several processes track into one storage directory at once, each into a log of its own, and upload through the
/// fault proxy to a real collector. Two of them are SIGKILLed at random moments round after round (each round starts
/// two new ones, which adopt the logs the killed ones left); the others run through every round. The collector
/// restarts at random too. At the end, every event any of them reported durable is in the store exactly once.
///
/// The processes share one identity and consent: before the steady ones go, a login in one is carried by another's
/// next event, and an opt-out in one stops another from recording; no two events share (anonymous id, sequence).
///
/// `SPOOR_E2E_PROCESSES` (default 4, at least 3) and `SPOOR_E2E_PROCESS_ROUNDS` (default 4) pick the run; the long
/// one is `scripts/e2e-crash --processes 4 50`.
@Suite("kill -9 rounds of several processes sharing one storage directory", .timeLimit(.minutes(10)))
struct SharedDirectoryKillRoundsTests {
    @Test("every event any process reported durable is stored exactly once, two of them killed at random each round")
    func durableEventsOfEveryProcessAreStoredExactlyOnce() async throws {
        let environment = ProcessInfo.processInfo.environment
        let processes = max(3, environment["SPOOR_E2E_PROCESSES"].flatMap { Int($0) } ?? 4)
        let rounds = environment["SPOOR_E2E_PROCESS_ROUNDS"].flatMap { Int($0) } ?? 4
        let seed = environment["SPOOR_E2E_SEED"].flatMap { UInt64($0) } ?? 20_261_126
        var random = SplitMix64(seed: seed)
        let started = ContinuousClock.now

        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port)
        defer { proxy.stop() }
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-shared-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        proxy.setScript(FaultScript((0..<4000).map { _ in KillRoundsTests.randomAction(using: &random) }))

        // Each launch numbers its events from LAUNCH × 1,000,000, so a number names one event and one launch.
        var launches = 0
        func launch(takingCommands: Bool = false) throws -> (child: LineProcess, launch: Int) {
            launches += 1
            return (try KillRoundsTests.child(
                storage: storage, url: proxy.batchURL, round: launches, takingCommands: takingCommands), launches)
        }
        var durable = Set<Int64>()
        var restarts = 0
        var maxDropped = 0
        var transcript: [String] = []
        var garbled = 0
        var refusedLines = 0
        /// Takes a finished (killed) launch's lines into the account.
        func account(_ child: LineProcess, _ number: Int) -> Int {
            var made = 0
            for line in child.output {
                transcript.append("\(number): \(line)")
                if line.hasPrefix("refused ") { refusedLines += 1 }
                if line.hasPrefix("flushed "), let dropped = line.split(separator: "=").last.flatMap({ Int($0) }) {
                    maxDropped = max(maxDropped, dropped)
                }
                guard line.hasPrefix("durable ") else { continue }
                let parts = line.split(separator: " ")
                guard parts.count == 3, let first = Int64(parts[1]), let last = Int64(parts[2]), first <= last,
                      first / 1_000_000 == number, last / 1_000_000 == number else {
                    garbled += 1
                    continue
                }
                durable.formUnion(first...last)
                made += Int(last - first + 1)
            }
            return made
        }

        // The ones that run through every round.
        var steady: [(child: LineProcess, launch: Int)] = []
        for _ in 0..<(processes - 2) {
            let started = try launch(takingCommands: true)
            _ = try await started.child.line { $0.hasPrefix("ready") }
            steady.append(started)
        }
        var killedRoundsWithDurableEvents = 0
        for round in 0..<rounds {
            let pair = try [launch(), launch()]
            for started in pair { _ = try await started.child.line { $0.hasPrefix("ready") } }
            if Int.random(in: 0..<3, using: &random) == 0 {
                _ = try await KillRoundsTests.durableLines(1, of: pair[0].child, from: 0)
                proxy.upstreamPort = nil
                proxy.upstreamPort = try await collector.restart(kill: Bool.random(using: &random))
                restarts += 1
            }
            // Each of the two is killed after its own random number (1 to 8) of `durable` lines.
            for started in pair {
                _ = try await KillRoundsTests.durableLines(Int.random(in: 1...8, using: &random), of: started.child, from: 0)
                try await started.child.stop(signal: SIGKILL)
                transcript.append("round \(round): launch \(started.launch) killed")
                if account(started.child, started.launch) > 0 { killedRoundsWithDurableEvents += 1 }
            }
        }
        // One identity and one consent for all: a login in the first steady process is carried by the next event of
        // the last one; while the first has opted out, the last records nothing. Each command is answered once the
        // change is saved in the shared state.
        let (changer, prober) = (steady[0].child, steady[steady.count - 1].child)
        func command(_ child: LineProcess, _ line: String) async throws -> String {
            #expect(child.send(line), "\(line): the child's input is closed")
            return try await child.line { $0.hasPrefix("did \(line) ") }.line
        }
        #expect(try await command(changer, "login e2e-user") == "did login e2e-user accepted=true")
        #expect(try await command(prober, "probe after-login") == "did probe after-login accepted=true")
        _ = try await command(changer, "optOut")
        #expect(try await command(prober, "probe after-opt-out") == "did probe after-opt-out accepted=false")
        // Opted in again, so the drain may send what the processes stored before.
        _ = try await command(prober, "optIn")
        #expect(try await command(changer, "probe after-opt-in") == "did probe after-opt-in accepted=true")

        // The steady ones go too (killed: what they reported durable counts, the rest is the drain's).
        for started in steady {
            _ = try await KillRoundsTests.durableLines(1, of: started.child, from: 0)
            try await started.child.stop(signal: SIGKILL)
            _ = account(started.child, started.launch)
        }

        // A last launch with the collector up and no faults adopts every log, claims every batch and sends them.
        proxy.setScript(.passThrough)
        let drain = try KillRoundsTests.child(storage: storage, url: proxy.batchURL, round: launches + 1, drain: true)
        let status = try await drain.exitStatus()
        #expect(status == 0, "the drain failed: \(drain.output.suffix(5))")

        let stored = try StoredNumbers(path: collector.databasePath)
        let lost = durable.subtracting(stored.counts.keys)
        let repeated = stored.counts.filter { $0.value > 1 }
        #expect(garbled == 0, "garbled lines from the children")
        #expect(lost.isEmpty, "durable but not stored: \(lost.sorted().prefix(20))")
        #expect(repeated.isEmpty, "stored more than once: \(repeated.keys.sorted().prefix(20))")
        #expect(killedRoundsWithDurableEvents == 2 * rounds, "every killed launch made events durable")
        #expect(maxDropped == 0, "the log dropped events at its caps: the check would not mean much")
        #expect(stored.repeatedPairs == 0, "(anonymous id, sequence) pairs used by two events")
        #expect(stored.anonymousIDs == 1, "every process has the directory's one identity")
        let probes = try StoredProbes(path: collector.databasePath)
        #expect(probes.distinctIDs == ["after-login": ["e2e-user"], "after-opt-in": ["e2e-user"]],
                "probes stored (tag: distinct ids): \(probes.distinctIDs)")
        if !lost.isEmpty || !repeated.isEmpty {
            let keep = URL(fileURLWithPath: "/tmp/spoor-e2e-shared-failure-\(seed)-\(rounds)")
            try? FileManager.default.removeItem(at: keep)
            try FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: storage, to: keep.appendingPathComponent("storage"))
            try FileManager.default.copyItem(at: collector.directory, to: keep.appendingPathComponent("collector"))
            try (transcript + ["drain"] + drain.output).joined(separator: "\n")
                .write(to: keep.appendingPathComponent("children.txt"), atomically: true, encoding: .utf8)
            print("e2e shared: the evidence is in \(keep.path)")
        }
        try await collector.stop()
        let seconds = (ContinuousClock.now - started).timeInterval
        let forwarded = proxy.requests.filter { $0.upstreamStatus == 200 }.compactMap(\.batchID)
        let resent = Dictionary(grouping: forwarded, by: { $0 }).values.filter { $0.count > 1 }.count
        print("""
            e2e shared: processes=\(processes) rounds=\(rounds) seed=\(seed) launches=\(launches + 1) durable=\(durable.count) \
            stored=\(stored.counts.count) lost=\(lost.count) dropped=\(maxDropped) duplicates=\(repeated.count) \
            collector-restarts=\(restarts) faults=\(proxy.requests.filter { $0.action != .forward }.count) \
            requests=\(proxy.requests.count) batches=\(stored.batches) resent-batches=\(resent) \
            repeated-pairs=\(stored.repeatedPairs) refused-lines=\(refusedLines) time=\(String(format: "%.1f", seconds))s
            """)
    }
}

/// The `Probe` events in the store: for each tag, the distinct ids its events carried.
struct StoredProbes {
    var distinctIDs: [String: [String]] = [:]

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.read { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT json_extract(properties, '$.tag') AS tag, distinct_id FROM events WHERE name = 'Probe' ORDER BY 1
                """) {
                distinctIDs[row["tag"], default: []].append(row["distinct_id"])
            }
        }
    }
}
