// The child of the kill -9 rounds (Tests/SpoorFaultTests/KillRoundsTests.swift): a tracker that tracks and
// uploads until it is SIGKILLed, saying on stdout which events are durable.
//
//   SpoorUploadChild DIR URL ROUND        track and upload until killed
//   SpoorUploadChild DIR URL ROUND drain  upload what earlier rounds left, then exit
//
// Lines: `ready ANONYMOUS-ID`, then `durable FIRST LAST` once events FIRST...LAST (their `n` property) are
// synced to the log, `flushed RESULT` after each flush, and in drain mode `drained RESULT`.
import Foundation
import SpoorModel
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

var configuration = Configuration(storageDirectory: URL(fileURLWithPath: arguments[1], isDirectory: true))
configuration.serverURL = url
configuration.flushBulkSize = 25
configuration.flushInterval = .milliseconds(200)
configuration.requestTimeout = .seconds(2)
configuration.durability = .batched(interval: .milliseconds(5))
let tracker: Tracker
do {
    tracker = try Tracker(configuration: configuration)
} catch {
    say("error \(error)")
    exit(1)
}
say("ready \(tracker.anonymousID)")

if draining {
    for _ in 0..<100 {
        let result = await tracker.flush(timeout: .seconds(10))
        if result.isComplete {
            say("drained \(result)")
            _ = await tracker.shutdown()
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
    if backlog < 2_000 {
        let first = next
        for _ in 0..<Int.random(in: 1...30, using: &random) {
            tracker.track("KillRound", properties: ["n": .int(next), "round": .int(round)])
            next += 1
        }
        // A flush syncs the log before it uploads: once it returns, everything tracked above is durable.
        let result = await tracker.flush(timeout: .seconds(5))
        say("durable \(first) \(next - 1)")
        backlog = result.pendingEvents
        say("flushed \(result) dropped=\(tracker.counters.droppedByLog)")
    } else {
        let result = await tracker.flush(timeout: .seconds(5))
        backlog = result.pendingEvents
        say("flushed \(result) dropped=\(tracker.counters.droppedByLog)")
    }
    // An app's pace, not a tight loop: flush() returns at once while the collector asks for a pause.
    try? await Task.sleep(for: .milliseconds(backlog < 2_000 ? 2 : 20))
}
