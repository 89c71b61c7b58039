// The whole pipeline under load: `track` on 2 threads → durable log → zstd frames → upload over loopback
// → a real `spoor-collector` process → SQLite. Build both in release and run (or `scripts/pipeline-bench`):
//
//     swift build -c release --package-path Collector --product spoor-collector
//     swift run -c release --package-path Benchmarks PipelineLoad --collector Collector/.build/release/spoor-collector \
//         [--events 1000000] [--threads 2] [--batch 1000] [--workload iPhoneApp|linuxService] [--in-flight 4]
//
// Prints wall time (first `track` to the last batch acknowledged), events/s, bytes on the wire per event,
// client and collector peak RSS and CPU, then checks the store: every tracked event stored exactly once.
import Foundation
import SpoorModel
import SpoorTracker
import SpoorLog
import SpoorWorkload

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("PipelineLoad: \(message)\n".utf8))
    exit(1)
}

let totalEvents = argument("--events").flatMap(Int.init) ?? 1_000_000
let threads = argument("--threads").flatMap(Int.init) ?? 2
let batchSize = argument("--batch").flatMap(Int.init) ?? 1_000
let workloadKind = Workload.Kind(rawValue: argument("--workload") ?? "iPhoneApp") ?? .iPhoneApp
// The uploader's window (`Configuration.maxBatchesInFlight`); its default when not given.
let inFlight = argument("--in-flight").flatMap(Int.init)
guard let collectorPath = argument("--collector") else {
    fail("--collector PATH (the spoor-collector executable) is required; scripts/pipeline-bench builds and passes it")
}
guard FileManager.default.isExecutableFile(atPath: collectorPath) else { fail("cannot execute \(collectorPath)") }

@inline(__always) func seconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Peak resident set (VmHWM) and CPU seconds (user + system) of a process, from Linux /proc.
func processFigures(_ pid: String) -> (peakMiB: Double, cpuSeconds: Double)? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kib = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) }),
          let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")")
    else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    let cpu = fields.count > 13 ? ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks : 0
    return (kib / 1024, cpu)
}

// MARK: - The collector, a real process on a free loopback port

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-pipeline-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }
let databasePath = scratch.appendingPathComponent("events.sqlite").path

let collector = Process()
collector.executableURL = URL(fileURLWithPath: collectorPath)
collector.arguments = ["serve", "--listen", "127.0.0.1:0", "--store", "sqlite:\(databasePath)"]
let collectorOutput = Pipe()
collector.standardOutput = collectorOutput
collector.standardError = FileHandle.nullDevice
try collector.run()

/// Reads the collector's standard output up to its `listening on HOST:PORT` line.
func listeningAddress() -> String {
    var text = ""
    let handle = collectorOutput.fileHandleForReading
    while !text.contains("\n") {
        let chunk = handle.availableData
        if chunk.isEmpty { fail("the collector exited before listening") }
        text += String(decoding: chunk, as: UTF8.self)
    }
    let line = text.split(separator: "\n").first.map(String.init) ?? ""
    guard line.hasPrefix("listening on ") else { fail("unexpected first line from the collector: \(line)") }
    return String(line.dropFirst("listening on ".count))
}
let address = listeningAddress()

// MARK: - The tracker

let storage = scratch.appendingPathComponent("tracker")
var configuration = Configuration(storageDirectory: storage)
configuration.upload.serverURL = URL(string: "http://\(address)/v1/batch")
configuration.tracking.appVersion = "1.0"
configuration.tracking.presetOverrides = Workload(workloadKind, seed: 0).presets
configuration.upload.flushBulkSize = batchSize
if let inFlight { configuration.upload.maxBatchesInFlight = inFlight }
// Room for the whole run, so the figure is delivery, not the caps dropping events.
configuration.storage.maxEvents = max(totalEvents, batchSize)
configuration.storage.maxBytes = 4 << 30
let tracker = try Tracker(configuration: configuration)
_ = tracker.registerSuperProperties(workloadKind == .iPhoneApp ? WorkloadPresets.iPhoneSuper : WorkloadPresets.linuxServerSuper)

var workload = Workload(workloadKind, seed: 2026)
let calls = (0..<4096).map { _ in workload.nextCall() }

let start = seconds()
let perThread = totalEvents / threads
let trackingDone = DispatchGroup()
for thread in 0..<threads {
    let count = thread == threads - 1 ? totalEvents - perThread * (threads - 1) : perThread
    Thread.detachNewThread {
        for i in 0..<count {
            let call = calls[(i &+ thread &* 1_031) & 4095]
            _ = tracker.track(call.name, properties: call.properties)
        }
        trackingDone.leave()
    }
    trackingDone.enter()
}
trackingDone.wait()
let tracked = seconds()
let result = await tracker.flush(timeout: .seconds(600))
let delivered = seconds()
let counters = tracker.counters
_ = await tracker.shutdown()

let client = processFigures("self")
let server = processFigures("\(collector.processIdentifier)")
collector.terminate()
collector.waitUntilExit()

// MARK: - What the store holds

let events = Process()
events.executableURL = URL(fileURLWithPath: collectorPath)
events.arguments = ["events", "--store", "sqlite:\(databasePath)"]
let eventsOutput = Pipe()
events.standardOutput = eventsOutput
try events.run()
let listing = String(decoding: eventsOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
events.waitUntilExit()
let stored = listing.split(separator: "\n").compactMap { $0.split(separator: "\t").first.flatMap { Int($0) } }.reduce(0, +)

let upload = counters.upload
let wall = delivered - start
func f(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
print("PipelineLoad: \(totalEvents) \(workloadKind.rawValue) events, \(threads) threads, \(batchSize)-event zstd batches, \(configuration.upload.maxBatchesInFlight) in flight, collector → SQLite")
print("  track() on the callers:  \(f(tracked - start)) s (\(f(Double(totalEvents) / (tracked - start) / 1e6)) M calls/s)")
print("  wall to last ack:        \(f(wall)) s  → \(Int(Double(stored) / wall)) events/s stored end to end")
print("  flush:                   \(result)")
print("  accepted \(counters.accepted), dropped by the log \(counters.droppedByLog), stored \(stored)")
if let upload {
    let perEvent = upload.deliveredEvents > 0 ? Double(upload.deliveredBytes) / Double(upload.deliveredEvents) : 0
    print("  wire: \(upload.deliveredBatches) batches, \(upload.deliveredBytes) bytes, \(f(perEvent, 1)) bytes/event; requests \(upload.requests), retries \(upload.retries)")
}
if let client { print("  client:    peak RSS \(f(client.peakMiB, 1)) MiB, CPU \(f(client.cpuSeconds)) s") }
if let server { print("  collector: peak RSS \(f(server.peakMiB, 1)) MiB, CPU \(f(server.cpuSeconds)) s") }
guard stored == counters.accepted, counters.droppedByLog == 0 else {
    fail("the store holds \(stored) events, the tracker accepted \(counters.accepted) (dropped \(counters.droppedByLog))")
}
