import Foundation
import Testing
import SpoorModel
import SpoorWire
import SpoorLog

import SpoorTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `SpoorCrashChild`: its lines and its end are awaited, never waited for on a cooperative thread.
func crashChild(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(builtExecutable("SpoorCrashChild"), arguments)
}

/// Runs a shared writer over `storage` until it has synced `events` events (numbered from 0), then SIGKILLs it;
/// returns the last event it reported synced. The adoption of what it left then has a known number of steps.
func killedSharedWriter(storage: TemporaryDirectory, seed: UInt64, events: UInt64) async throws -> UInt64 {
    let writer = try crashChild(["shared-writer", storage.path, "0", "\(seed)", "\(events)"])
    var synced: UInt64 = 0
    var lines = 0
    while synced < events - 1, lines < 10_000, let line = await writer.nextLine() {
        lines += 1
        let parts = line.split(separator: " ")
        if parts.first == "synced", parts.count == 2 { synced = UInt64(parts[1])! }
    }
    writer.kill()
    let ended = await writer.termination()
    #expect(ended == .signalled(SIGKILL))
    return synced
}

@Suite struct ChildProcessTests {
    /// Rounds of the SIGKILL test: 20 in `make test`, more from `make crash-test`.
    static let crashRounds = Int(ProcessInfo.processInfo.environment["SPOOR_CRASH_ROUNDS"] ?? "") ?? 20

    /// Kills a writer with SIGKILL at random moments and checks, after each, that every
    /// synced event is present exactly once, released ones never come back, and nothing is corrupt. A round takes
    /// well under a second; the limit (a minute for every ten rounds, ten at least) makes a hang fail.
    @Test(.timeLimit(.minutes(max(10, crashRounds / 10))))
    func syncedEventsSurviveSIGKILLExactlyOnce() async throws {
        let rounds = Self.crashRounds
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["SPOOR_CRASH_SEED"] ?? "") ?? 0x5EED
        var random = SplitMix64(seed: baseSeed)
        var directory = TemporaryDirectory()
        var chainStart: UInt64 = 0
        var next: UInt64 = 0
        var synced: UInt64? = nil
        var released: [ClosedRange<UInt64>] = []
        var releasing: [ClosedRange<UInt64>] = []
        var totals = (checked: 0, syncedChecked: 0, lines: 0, batchesPending: 0, released: 0, tornTails: UInt64(0))

        for round in 0..<rounds {
            // A new directory every ten rounds keeps each check quick; within a chain, recoveries stack up.
            if round % 10 == 0 {
                directory = TemporaryDirectory()
                chainStart = next
                synced = nil
                released = []
                releasing = []
            }
            let seed = random.next()
            let child = try crashChild(["crash", directory.path, "\(next)", "\(seed)"])
            let killAfter = Int.random(in: 0...30, using: &random)
            var lines = 0
            var killed = false
            while let line = await child.nextLine() {
                let parts = line.split(separator: " ")
                switch parts.first {
                case "synced": synced = UInt64(parts[1])!
                case "releasing": releasing.append(UInt64(parts[1])!...UInt64(parts[2])!)
                case "released":
                    let range = UInt64(parts[1])!...UInt64(parts[2])!
                    releasing.removeAll { $0 == range }
                    released.append(range)
                case "ready": break
                default: Issue.record("round \(round) seed \(seed): child said \(line)")
                }
                lines += 1
                if !killed && lines > killAfter {
                    child.kill()
                    killed = true
                }
            }
            if !killed { child.kill() }
            // It works until it is killed: any other end is a failure of the child.
            let termination = await child.termination(), errors = await child.standardError()
            #expect(termination == .signalled(SIGKILL), "round \(round) seed \(seed): \(errors)")

            let log = try open(directory)
            defer { log.close() }
            var seen: [UInt64: Int] = [:]
            var mismatched = 0
            let decoder = EventDecoder()
            log.forEachRecord { payload in
                do {
                    for event in try decoder.decodeBatch(payload) {
                        seen[event.sequence, default: 0] += 1
                        // Whole or extending a context record, each event reads back exactly as it was made.
                        if event != Fixtures.event(Int(event.sequence)) { mismatched += 1 }
                    }
                } catch {
                    Issue.record("round \(round) seed \(seed): a record does not decode: \(error)")
                }
            }
            for batch in log.pendingBatches() {
                let frame = try FrameDecoder().decode(log.frame(of: batch.id))
                for event in try decoder.decodeBatch(frame.payload) {
                    seen[event.sequence, default: 0] += 1
                    if event != Fixtures.event(Int(event.sequence)) { mismatched += 1 }
                }
            }
            let counters = log.counters
            #expect(mismatched == 0, "round \(round) seed \(seed)")
            #expect(counters.corrupt == 0, "round \(round) seed \(seed)")
            #expect(counters.quarantined == 0, "round \(round) seed \(seed)")
            let highest = ([seen.keys.max(), synced, released.map(\.upperBound).max(), releasing.map(\.upperBound).max()]
                .compactMap { $0 }.max()).map { $0 + 1 } ?? next
            for sequence in chainStart..<max(highest, chainStart) {
                let count = seen[sequence, default: 0]
                if released.contains(where: { $0.contains(sequence) }) {
                    #expect(count == 0, "round \(round) seed \(seed): released event \(sequence) came back")
                } else if releasing.contains(where: { $0.contains(sequence) }) {
                    #expect(count <= 1, "round \(round) seed \(seed): event \(sequence) duplicated")
                } else if let synced, sequence <= synced {
                    #expect(count == 1, "round \(round) seed \(seed): synced event \(sequence) present \(count) times")
                } else {
                    // Handed to the OS before the kill: a process crash loses none of it, and never duplicates.
                    #expect(count == 1, "round \(round) seed \(seed): event \(sequence) present \(count) times")
                }
            }
            totals.checked += Int(max(highest, chainStart) - chainStart)
            totals.syncedChecked += synced.map { Int($0 + 1 - chainStart) } ?? 0
            totals.lines += lines
            totals.batchesPending += log.pendingBatches().count
            totals.released += released.count
            totals.tornTails += counters.tornTails
            next = max(highest, next)
        }
        print(
            "crash test: \(rounds) rounds (seed \(baseSeed)), \(next) events written; per-round checks covered "
                + "\(totals.checked) events, \(totals.syncedChecked) of them synced; \(totals.batchesPending) pending and "
                + "\(totals.released) released batches checked; \(totals.lines) lines reported; torn tails \(totals.tornTails) "
                + "(chain figures summed over rounds)"
        )
    }

    /// Under a file-size limit (EFBIG), appends keep working in memory and reach the disk once it has room.
    @Test func diskFullKeepsEventsInMemoryUntilThereIsRoom() async throws {
        let directory = TemporaryDirectory()
        let child = try crashChild(["disk-full", directory.path + "/log", "1000"])
        let lines = await child.lines()
        let termination = await child.termination(), errors = await child.standardError()
        #expect(termination == .exited(0), "\(errors)")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("full writeErrors=") == true && lines.first?.hasSuffix("records=1000") == true)
        #expect(lines.first?.contains("writeErrors=0") == false)
        #expect(lines.dropFirst().first == "sync-while-full diskFull")
        #expect(lines.last == "sync-after ok records=1000")
        let log = try EventLog(directory: directory.file("log"))
        #expect(Fixtures.sequences(log) == Array(0..<1000))
        #expect(log.counters.writeErrors >= 1)
        #expect(log.counters.corrupt == 0)
    }

    /// A large offline backlog stays on disk: the process's peak memory does not grow with it.
    @Test func largeBacklogKeepsMemoryBounded() async throws {
        let count = Int(ProcessInfo.processInfo.environment["SPOOR_BACKLOG_EVENTS"] ?? "") ?? 50_000
        let directory = TemporaryDirectory()
        let child = try crashChild(["backlog", directory.path + "/log", "\(count)"])
        let lines = await child.lines()
        let termination = await child.termination(), errors = await child.standardError()
        #expect(termination == .exited(0), "\(errors)")
        try #require(lines.count == 2, "\(lines)")
        func value(_ key: String, _ line: String) -> Int? {
            line.split(separator: " ").first { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
        }
        #expect(value("records", lines[0]) == count)
        #expect(value("read", lines[1]) == count)
        #expect(value("sealed", lines[1]) == min(count, 1000))
        for line in lines {
            let peak = try #require(value("peakKiB", line))
            #expect(peak > 0 && peak <= 64 << 10, "\(line)")
        }
    }
}
