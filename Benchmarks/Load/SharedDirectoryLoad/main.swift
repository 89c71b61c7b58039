// Several processes tracking into one storage directory, against one process alone: the total events per second
// each way, from `track` to the durable log (every event synced by `shutdown`; no upload, so the log's caps are raised
// past the run). Build and run in release:
//
//     swift run -c release --package-path Benchmarks SharedDirectoryLoad [--events N] [--processes N] [--rounds N]
//
// Each round runs, in turn: one process tracking N events; P processes tracking N/P each into one storage directory
// at once (each writes a log of its own there); P processes into P directories (the same work without the sharing).
// The figure is N over the wall time from the first start to the last exit, start-up and shutdown included.
// `--child DIR N` is one such process (the tool runs itself).
import Foundation
import SpoorModel
import SpoorTracker
import SpoorWorkload

func argument(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let parsed = Int(arguments[index + 1])
    else { return value }
    return parsed
}

/// One process: a tracker on `directory` with the Linux service workload's presets and super properties, `count` of
/// its calls on one thread, then `shutdown` (everything synced).
func child(directory: URL, count: Int) async throws {
    var configuration = Configuration(storageDirectory: directory)
    configuration.tracking.appVersion = "1.0"
    configuration.tracking.presetOverrides = Workload(.linuxService, seed: 0).presets
    // Nothing is uploaded, so the log keeps everything: the caps are raised past the run.
    configuration.storage.maxEvents = count + 1
    configuration.storage.maxBytes = 2 << 30
    let tracker = try Tracker(configuration: configuration)
    _ = tracker.registerSuperProperties(WorkloadPresets.linuxServerSuper)
    var workload = Workload(.linuxService, seed: UInt64(getpid()))
    let calls = (0..<4096).map { _ in workload.nextCall() }
    for index in 0..<count {
        let call = calls[index & 4095]
        tracker.track(call.name, properties: call.properties)
    }
    guard await tracker.shutdown(timeout: .seconds(600)) else {
        FileHandle.standardError.write(Data("shutdown timed out\n".utf8))
        exit(1)
    }
    let stored = tracker.counters
    if stored.droppedByLog > 0 {
        FileHandle.standardError.write(Data("the log dropped \(stored.droppedByLog) events\n".utf8))
        exit(1)
    }
}

/// Runs `processes` children of `perProcess` events each, each in `directories[i % directories.count]`; returns the
/// wall seconds from the first start to the last exit.
func run(processes: Int, perProcess: Int, directories: [URL]) throws -> Double {
    let started = Date()
    var children: [Process] = []
    for index in 0..<processes {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--child", directories[index % directories.count].path, "\(perProcess)"]
        try process.run()
        children.append(process)
    }
    for process in children {
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw LoadError(reason: "a child failed: \(process.terminationStatus)") }
    }
    return Date().timeIntervalSince(started)
}

struct LoadError: Error { var reason: String }

if let index = CommandLine.arguments.firstIndex(of: "--child"), index + 2 < CommandLine.arguments.count,
   let count = Int(CommandLine.arguments[index + 2]) {
    try await child(directory: URL(fileURLWithPath: CommandLine.arguments[index + 1]), count: count)
    exit(0)
}

let events = argument("--events", default: 400_000)
let processes = argument("--processes", default: 4)
let rounds = argument("--rounds", default: 3)
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-shared-load-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: scratch) }
var figures: [String: [Double]] = [:]
let kinds = ["1 process", "\(processes) processes, one directory", "\(processes) processes, \(processes) directories"]
for round in 0..<rounds {
    for (kind, name) in kinds.enumerated() {
        let base = scratch.appendingPathComponent("r\(round)-k\(kind)")
        let seconds: Double
        switch kind {
        case 0: seconds = try run(processes: 1, perProcess: events, directories: [base])
        case 1: seconds = try run(processes: processes, perProcess: events / processes, directories: [base])
        default:
            seconds = try run(processes: processes, perProcess: events / processes,
                              directories: (0..<processes).map { base.appendingPathComponent("p\($0)") })
        }
        let rate = Double(events / (kind == 0 ? 1 : processes) * (kind == 0 ? 1 : processes)) / seconds
        figures[name, default: []].append(rate)
        print("round \(round + 1)  " + name.padding(toLength: 34, withPad: " ", startingAt: 0)
              + String(format: "%8.0f events/s  (%.2f s)", rate, seconds))
        try? FileManager.default.removeItem(at: base)
    }
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let single = median(figures[kinds[0]]!)
print("medians over \(rounds) rounds, \(events) events each:")
for name in kinds {
    let value = median(figures[name]!)
    print("  " + name.padding(toLength: 34, withPad: " ", startingAt: 0)
          + String(format: "%8.0f events/s  ratio to one process %.2f", value, value / single))
}
