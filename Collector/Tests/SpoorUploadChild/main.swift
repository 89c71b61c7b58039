// The child of the kill -9 rounds (Tests/SpoorFaultTests/KillRoundsTests.swift): a tracker that tracks and
// uploads until it is SIGKILLed, saying on stdout which events are durable.
//
//   SpoorUploadChild DIR URL ROUND          track and upload until killed
//   SpoorUploadChild DIR URL ROUND drain    upload what earlier rounds left, then exit
//   SpoorUploadChild DIR URL 0 offline N    track N events while the collector is away (the log keeps 10,000), flush,
//                                           say what is kept; once standard input ends, flush again and say what went
//
// With SPOOR_UPLOAD_CHILD_COMMANDS=1 in its environment it also reads commands from standard input, one a line, while
// it tracks: `login ID`, `logout`, `optOut`, `optIn`, `register KEY VALUE` (a string super property), `probe TAG` (track
// one `Probe` event with that `tag`); each is said back as `did LINE accepted=BOOL` once applied and stored (the
// change saved in the shared state), for tests of what processes sharing a directory see of each other. A `KillRound`
// event the tracker refused (the user opted out, maybe in another process) is never in a `durable` line.
//
// Lines: `ready ANONYMOUS-ID`, then `durable FIRST LAST` once events FIRST...LAST (their `n` property) are
// synced to the log, `flushed RESULT` after each flush, and in drain mode `drained RESULT`. The offline mode
// (the end-to-end test's, in a process of its own so that its memory is its own) says `offline KEY=VALUE…`, then
// `online KEY=VALUE…`.
import Foundation
import SpoorModel
import SpoorSystem
import SpoorTracker

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one line straight to fd 1, so nothing waits in a buffer when the process is killed.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var done = 0
    while done < bytes.count {
        let count = bytes.withUnsafeBytes { write(1, $0.baseAddress! + done, $0.count - done) }
        if count <= 0 { return }
        done += count
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let round = Int64(arguments[3]), let url = URL(string: arguments[2]) else {
    say("usage: SpoorUploadChild DIR URL ROUND [drain]")
    exit(2)
}
let draining = arguments.count > 4 && arguments[4] == "drain"
let offline = arguments.count > 5 && arguments[4] == "offline" ? Int(arguments[5]) : nil

var configuration = Configuration(storageDirectory: URL(fileURLWithPath: arguments[1], isDirectory: true))
configuration.upload.serverURL = url
configuration.upload.flushBulkSize = 25
configuration.upload.flushInterval = .milliseconds(200)
// In the rounds, a request whose connection the proxy reset may be left without an answer by the HTTP client
// (seen on Linux): the timeout ends it, and the batch goes again. Elsewhere no fault hangs a request, so the timeout
// only bounds a hang: a loaded machine's slow answer is still an answer.
configuration.upload.requestTimeout = draining || offline != nil ? .seconds(120) : .seconds(5)
configuration.storage.durability = offline == nil ? .batched(interval: .milliseconds(5)) : .none
// The rounds judge exactly-once, not the backoff: with the default ceiling (5 minutes) a few faults in a row keep the
// backlog at its 2,000-event stop for minutes, the child says no `durable` line meanwhile, and the test's wait for one
// runs out. Capped at 2 s, uploads resume within a round whatever the faults drew.
if offline == nil { configuration.upload.backoff = Backoff(base: .milliseconds(100), cap: .seconds(2)) }
if offline != nil { configuration.storage.maxEvents = 10_000 }

/// The uploader's requests as they end: the rounds wait for the next one rather than pace themselves with a sleep.
final class Attempts: Sendable {
    private let upcoming = Locked(Promise<Void>())

    /// Fulfilled when the next request ends.
    func next() -> Promise<Void> { upcoming.withLock { $0 } }

    func ended() {
        let ending = upcoming.withLock { current in
            defer { current = Promise() }
            return current
        }
        ending.fulfil(())
    }
}
let attempts = Attempts()
configuration.upload.onAttempt = { _ in attempts.ended() }
let tracker: Tracker
do {
    tracker = try Tracker(configuration: configuration)
} catch {
    say("error \(error)")
    exit(1)
}
say("ready \(tracker.anonymousID)")

/// Runs `body` on the cooperative pool and waits for it on this thread (the command reader's own).
@Sendable func waitFor(_ body: @escaping @Sendable () async -> Void) {
    let done = Promise<Void>()
    Task {
        await body()
        done.fulfil(())
    }
    _ = done.wait(timeout: .seconds(120))
}

/// Applies the commands standard input gives, on a thread of its own (a blocking read), while the rounds go on.
func obeyCommands() {
    Thread.detachNewThread {
        while let line = readLine() {
            let words = line.split(separator: " ", maxSplits: 2).map(String.init)
            var accepted = true
            switch words.first {
            case "login" where words.count == 2: accepted = tracker.login(words[1])
            case "logout": tracker.logout()
            case "optOut": waitFor { _ = await tracker.optOut(deleteStoredData: false) }
            case "optIn": tracker.optIn()
            case "register" where words.count == 3: accepted = tracker.registerSuperProperties([words[1]: .string(words[2])])
            case "probe" where words.count == 2: accepted = tracker.track("Probe", properties: ["tag": .string(words[1])])
            default:
                say("error: unknown command \(line)")
                continue
            }
            // Stored, and the change saved in the shared state, before it is said done. The upload is not awaited.
            waitFor { _ = await tracker.flush(timeout: .milliseconds(1)) }
            say("did \(line) accepted=\(accepted)")
        }
    }
}
if ProcessInfo.processInfo.environment["SPOOR_UPLOAD_CHILD_COMMANDS"] == "1" { obeyCommands() }

/// This process's resident memory in bytes (`VmRSS`), or 0 where /proc has none.
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
    return kilobytes * 1024
}

if let offline {
    let before = residentBytes()
    for n in 0..<offline {
        tracker.track("Offline", properties: ["task": 0, "n": .int(Int64(n))])
    }
    let kept = await tracker.flush(timeout: .seconds(120))
    let counters = tracker.counters
    let reason: String
    switch kept.pendingReason {
    case .backingOff?: reason = "backingOff"
    case nil: reason = "none"
    default: reason = "other"
    }
    // The reason's own words last: they have spaces.
    say("offline delivered=\(kept.deliveredEvents) pending=\(kept.pendingEvents) reason=\(reason) "
        + "accepted=\(counters.accepted) dropped=\(counters.droppedByLog) retries=\(counters.upload?.retries ?? -1) "
        + "state=\(counters.upload?.state.rawValue ?? "none") rss-growth=\(residentBytes() - before) "
        + "why=\(kept.pendingReason.map { "\($0)" } ?? "-")")
    // Standard input ends when the collector is back; a thread of its own waits for that.
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            continuation.resume()
        }
    }
    let online = await tracker.flush(timeout: .seconds(120))
    say("online complete=\(online.isComplete) delivered=\(online.deliveredEvents) pending=\(online.pendingEvents)")
    _ = await tracker.shutdown(timeout: .seconds(120))
    exit(0)
}

if draining {
    for _ in 0..<100 {
        let result = await tracker.flush(timeout: .seconds(120))
        if result.isComplete {
            say("drained \(result)")
            _ = await tracker.shutdown(timeout: .seconds(120))
            exit(0)
        }
        say("flushed \(result)")
    }
    say("error: not drained")
    exit(1)
}

// Each round numbers its events from ROUND × 1,000,000, so a number names one event across all rounds.
var random = SplitMix64(seed: UInt64(round) &* 0x9E37_79B9 &+ 1)
var next = round * 1_000_000
var backlog = 0
while true {
    // Exactly-once holds within the log's caps: beyond them it drops the oldest events (counted). While the
    // collector refuses or pauses us, stop tracking at 2,000 waiting events, far below the cap (10,000).
    let result: FlushResult
    if backlog < 2_000 {
        let first = next
        var refused = false
        for _ in 0..<Int.random(in: 1...30, using: &random) {
            if !tracker.track("KillRound", properties: ["n": .int(next), "round": .int(round)]) { refused = true }
            next += 1
        }
        // A flush syncs the log before it uploads: once it returns, everything tracked above is durable. It waits
        // only briefly for the upload, which goes on meanwhile: the test counts these lines, not uploads.
        result = await tracker.flush(timeout: .milliseconds(200))
        say(refused ? "refused \(first) \(next - 1)" : "durable \(first) \(next - 1)")
    } else {
        result = await tracker.flush(timeout: .milliseconds(200))
    }
    backlog = result.pendingEvents
    say("flushed \(result) dropped=\(tracker.counters.droppedByLog)")
    switch result.pendingReason {
    case .backingOff?, .pausedByServer?:
        // The flush returned at once: its one attempt failed, or the collector asked for a pause. Flushing again
        // straight away would hammer a restarting collector, so wait for the uploader's own next request to end
        // (within its backoff cap). The bound covers an attempt that ended before this wait began.
        _ = await attempts.next().value(orAfter: .seconds(5), ())
    default:
        // Delivered, or still uploading when the flush's wait ran out: the flush itself set the pace.
        break
    }
}
