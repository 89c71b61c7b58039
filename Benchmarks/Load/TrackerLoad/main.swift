// Measures the tracker's hot path: `track` latency and allocations on the caller's thread, and sustained
// throughput from two threads into the durable log. Build and run in release mode:
//
//     swift run -c release --package-path Benchmarks TrackerLoad [--samples N] [--per-thread N] [--rounds N] [--workload iPhoneApp]
//
// With `--workload iPhoneApp` (or `linuxService`) the tracker has that workload's presets and super properties
// and every call is the workload's next call (SpoorWorkload), instead of the 5-property reference event.
// `--hook-only` runs only the beforeRecord comparison (no hook, a pass-through hook, an enriching hook).
// `--hot-path` runs only `track()` back to back against the calls sharing its path (see `measureHotPath`).
// `--frames` runs only the sealing and decoding of realistic 50-event zstd frames, with and without the shared context.
import CMallocCounter
import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire
import SpoorTracker
import SpoorLog
import SpoorWorkload

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The reference event of issue 4: a code event with 5 properties of mixed types.
let referenceProperties: Properties = [
    "product": "tea", "price": 3.5, "quantity": 2, "gift": false, "tags": ["green", "loose"],
]

func argument(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let parsed = Int(arguments[index + 1])
    else { return value }
    return parsed
}

let samples = argument("--samples", default: 1_000_000)
let perThread = argument("--per-thread", default: 1_000_000)
let rounds = argument("--rounds", default: 5)

/// The realistic workload asked for, if any, and 4096 of its calls, cycled through.
let workloadKind: Workload.Kind? = CommandLine.arguments.firstIndex(of: "--workload").flatMap { index in
    index + 1 < CommandLine.arguments.count ? Workload.Kind(rawValue: CommandLine.arguments[index + 1]) : nil
}
let calls: [Workload.Call] = {
    guard let workloadKind else { return [Workload.Call(name: "BuyProduct", properties: referenceProperties, isAutoTrack: false, delay: 0)] }
    var workload = Workload(workloadKind, seed: 2026)
    return (0..<4096).map { _ in workload.nextCall() }
}()
let callMask = calls.count == 1 ? 0 : calls.count - 1
let eventLabel = workloadKind.map { "\($0.rawValue) calls" } ?? "5 properties"

@inline(__always) func nanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func makeTracker(_ configure: (inout Configuration) -> Void = { _ in }) throws -> (Tracker, URL) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-bench-\(UUID().uuidString)")
    var configuration = Configuration(storageDirectory: directory)
    configuration.tracking.appVersion = "1.0"
    if let workloadKind {
        configuration.tracking.presetOverrides = Workload(workloadKind, seed: 0).presets
    }
    configure(&configuration)
    let tracker = try Tracker(configuration: configuration)
    if let workloadKind {
        _ = tracker.registerSuperProperties(workloadKind == .iPhoneApp ? WorkloadPresets.iPhoneSuper : WorkloadPresets.linuxServerSuper)
    }
    return (tracker, directory)
}

/// CPU seconds used so far by the thread named `name` (Linux: /proc/self/task/*/stat), or nil.
func threadCPUSeconds(named name: String) -> Double? {
    #if os(Linux)
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    for task in tasks {
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        // Fields after the command: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticks
    }
    #endif
    return nil
}

func percentile(_ sorted: [UInt64], _ p: Double) -> UInt64 {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

struct LatencyResult {
    var name: String
    var sorted: [UInt64]
    var mallocsPerCall: Double
    var overhead: UInt64

    func line() -> String {
        func f(_ p: Double) -> String { "\(percentile(sorted, p))" }
        return "\(name.padding(toLength: 44, withPad: " ", startingAt: 0)) p50 \(f(0.5)) ns  p90 \(f(0.9)) ns  p99 \(f(0.99)) ns  "
            + "p99.9 \(f(0.999)) ns  max \(sorted.last ?? 0) ns  mallocs/call \(String(format: "%.3f", mallocsPerCall))"
    }
}

/// Times `samples` calls one by one; reported times have the timer's own cost (the median of an empty
/// measurement) taken off.
func measureLatency(name: String, pause: UInt64 = 0, _ body: (Int) -> Void) -> LatencyResult {
    var times = [UInt64](repeating: 0, count: samples)
    // The cost of reading the clock twice.
    var empty = [UInt64](repeating: 0, count: 10_000)
    for i in 0..<empty.count {
        let start = nanoseconds()
        empty[i] = nanoseconds() - start
    }
    empty.sort()
    let overhead = empty[empty.count / 2]
    for i in 0..<min(samples, 50_000) { body(i) }  // warm-up: buffers reach their steady capacity
    let mallocsBefore = spoor_thread_malloc_count()
    var untimedMallocs: UInt64 = 0
    for i in 0..<samples {
        let start = nanoseconds()
        body(i)
        let end = nanoseconds()
        let elapsed = end - start
        times[i] = elapsed > overhead ? elapsed - overhead : 0
        if pause > 0 {
            let before = spoor_thread_malloc_count()
            while nanoseconds() - end < pause {}
            untimedMallocs += spoor_thread_malloc_count() - before
        }
    }
    let mallocs = spoor_thread_malloc_count() - mallocsBefore - untimedMallocs
    times.sort()
    return LatencyResult(name: name, sorted: times, mallocsPerCall: Double(mallocs) / Double(samples), overhead: overhead)
}

/// The writer's work without the tracker: merging a 16-property event and encoding it, one thread.
func measureWriterParts() {
    let base: Properties = [
        "$os": "Debian GNU/Linux", "$os_version": "12", "$model": "Standard PC", "$manufacturer": "QEMU",
        "$app_version": "1.0", "$timezone_offset": 0, "$device_id": "6F9619FF-8B86-D011-B42D-00CF4FC964FF",
        "$lib": "Linux", "$lib_version": "0.1.0",
    ]
    let count = 200_000
    var merged: [Properties] = []
    merged.reserveCapacity(1)
    var start = nanoseconds()
    for _ in 0..<count {
        var properties = base
        for (key, value) in referenceProperties { properties[key] = value }
        properties["$is_first_day"] = true
        merged.append(properties)
        merged.removeAll(keepingCapacity: true)
    }
    let mergeNanos = Double(nanoseconds() - start) / Double(count)
    var properties = base
    for (key, value) in referenceProperties { properties[key] = value }
    properties["$is_first_day"] = true
    var event = Event(
        name: "BuyProduct", time: 1_700_000_000_000, trackID: 42, sequence: 7, distinctID: "user-1",
        anonymousID: "6F9619FF-8B86-D011-B42D-00CF4FC964FF", lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code),
        properties: properties)
    if let workloadKind {
        var workload = Workload(workloadKind, seed: 2026)
        event = workload.events(40).last!
    }
    let encoder = EventEncoder()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(1 << 20)
    start = nanoseconds()
    for _ in 0..<count {
        try! encoder.appendBatchEntry(event, to: &bytes)
        if bytes.count > 1 << 19 { bytes.removeAll(keepingCapacity: true) }
    }
    let encodeNanos = Double(nanoseconds() - start) / Double(count)
    print(String(format: "writer parts alone (1 thread): merge 16 properties %.0f ns, EventEncoder.appendBatchEntry %.0f ns (%d bytes, %d properties)",
                 mergeNanos, encodeNanos, (try! encoder.encode(event)).count, event.properties.count))
}

/// The `beforeRecord` hook's cost, in one run: `track()` p50 on the caller and the writer's CPU per event,
/// with no hook, a pass-through hook and a hook that adds a property. Rounds alternate the three.
func measureHook() async throws {
    let variants: [(String, (@Sendable (inout HookEvent) throws -> HookDecision)?)] = [
        ("no hook", nil),
        ("pass-through hook", { _ in .record }),
        ("enriching hook", { event in
            event.properties["tenant"] = "acme"
            return .record
        }),
    ]
    var writer: [String: [Double]] = [:]
    var caller: [String: [UInt64]] = [:]
    let events = min(perThread, 500_000)
    for _ in 0..<rounds {
        for (name, hook) in variants {
            let (tracker, directory) = try makeTracker {
                $0.storage.maxEvents = 2 * events
                $0.storage.maxBufferedEvents = 2 * events
                $0.storage.maxBytes = 1 << 30
                $0.tracking.beforeRecord = hook
            }
            await tracker.flush()
            let before = threadCPUSeconds(named: "spoor.writer")
            var times: [UInt64] = []
            times.reserveCapacity(events)
            for _ in 0..<events {
                let start = nanoseconds()
                _ = tracker.track("BuyProduct", properties: referenceProperties)
                times.append(nanoseconds() - start)
            }
            await tracker.flush()
            if let before, let after = threadCPUSeconds(named: "spoor.writer") {
                writer[name, default: []].append((after - before) / Double(events))
            }
            times.sort()
            caller[name, default: []].append(percentile(times, 0.5))
            await tracker.shutdown(timeout: .seconds(60))
            try? FileManager.default.removeItem(at: directory)
        }
    }
    let baseline = (writer["no hook"] ?? []).sorted().dropFirst((writer["no hook"]?.count ?? 0) / 2).first ?? 0
    for (name, _) in variants {
        let w = (writer[name] ?? []).sorted()
        let c = (caller[name] ?? []).sorted()
        guard !w.isEmpty, !c.isEmpty else { continue }
        let median = w[w.count / 2]
        print(String(format: "beforeRecord, %@: writer CPU median %.2f µs/event (%.2fx no hook), track() p50 median %llu ns",
                     name.padding(toLength: 18, withPad: " ", startingAt: 0), median * 1e6, baseline > 0 ? median / baseline : 0, c[c.count / 2]))
    }
}

/// `--frames`: what a realistic 50-event batch costs to seal and to decode, and its bytes, with and without the
/// shared context (`Batch.contexts`), in one run.
func measureFrames() throws {
    for kind in Workload.Kind.allCases {
        var workload = Workload(kind, seed: 2026)
        let events = workload.events(10_000)
        let encoder = EventEncoder()
        let payloads: [[UInt8]] = try stride(from: 0, to: events.count, by: 50).map { start in
            var payload: [UInt8] = []
            for event in events[start..<start + 50] { try encoder.appendBatchEntry(event, to: &payload) }
            return payload
        }
        for shared in [false, true] {
            var best = (seal: UInt64.max, decode: UInt64.max)
            var bytes = 0, uncompressed = 0
            for _ in 0..<5 {
                bytes = 0
                uncompressed = 0
                let sealStart = nanoseconds()
                let frames = try payloads.map { payload in
                    try BatchFrame.encode(
                        payload: shared ? LegacySharedContext.factor(payload) : payload, recordCount: 50, batchID: .random(), sealedAt: 0,
                        codec: .zstd)
                }
                let sealEnd = nanoseconds()
                let decoder = EventDecoder()
                var decoded = 0
                for frame in frames {
                    let payload = try FrameDecoder().decode(frame).payload
                    decoded += try decoder.decodeBatch(payload).count
                    bytes += frame.count
                    uncompressed += payload.count
                }
                let decodeEnd = nanoseconds()
                precondition(decoded == events.count)
                best = (min(best.seal, sealEnd - sealStart), min(best.decode, decodeEnd - sealEnd))
            }
            let n = Double(events.count)
            print(String(format: "frames, %@, 50-event zstd, %@: seal %.0f ns/event, decode %.0f ns/event, %.1f B/event uncompressed, %.1f B/event on the wire",
                         kind.rawValue, shared ? "shared context" : "plain events  ", Double(best.seal) / n, Double(best.decode) / n,
                         Double(uncompressed) / n, Double(bytes) / n))
        }
    }
}

/// 64 users a server's requests come from, for `track(distinctID:)`.
let userIDs = (0..<64).map { "user-\($0)-5F3C2A" }

/// `--hot-path`: `track()` p50 on the caller, back to back, for the variants of the call that share its path
/// (a plain call; a per-call id, cycling through 64 users; with a dynamic super-properties provider), each in a
/// tracker of its own. Rounds alternate the variants; the median p50 of each is printed with its ratio to the
/// plain call.
func measureHotPath() async throws {
    typealias Variant = (name: String, configure: (Tracker) -> Void, call: (Tracker, Workload.Call, Int) -> Void)
    let variants: [Variant] = [
        ("track()", { _ in }, { tracker, call, _ in _ = tracker.track(call.name, properties: call.properties) }),
        ("track(distinctID:)", { _ in }, { tracker, call, i in
            _ = tracker.track(call.name, distinctID: userIDs[i & 63], properties: call.properties)
        }),
        ("track(), dynamic super properties", { tracker in
            tracker.registerDynamicSuperProperties { ["tier": "gold"] }
        }, { tracker, call, _ in _ = tracker.track(call.name, properties: call.properties) }),
    ]
    var p50s: [String: [UInt64]] = [:]
    for _ in 0..<rounds {
        for variant in variants {
            let (tracker, directory) = try makeTracker {
                // Room for every call: the log never drops, so the writer's work stays the same in every round.
                $0.storage.maxEvents = 2 * samples + 100_000
                $0.storage.maxBytes = 1 << 30
            }
            variant.configure(tracker)
            await tracker.flush()
            let result = measureLatency(name: variant.name) { i in variant.call(tracker, calls[i & callMask], i) }
            p50s[variant.name, default: []].append(percentile(result.sorted, 0.5))
            print(result.line())
            await tracker.shutdown(timeout: .seconds(60))
            try? FileManager.default.removeItem(at: directory)
        }
    }
    func median(_ name: String) -> UInt64 {
        let values = (p50s[name] ?? [0]).sorted()
        return values[values.count / 2]
    }
    let plain = median(variants[0].name)
    for variant in variants {
        let values = p50s[variant.name] ?? []
        print(String(format: "hot path, %@: p50 median %llu ns over %d rounds (%@), %.3fx track()",
                     variant.name.padding(toLength: 36, withPad: " ", startingAt: 0), median(variant.name), values.count,
                     values.map(String.init).joined(separator: ", "), plain > 0 ? Double(median(variant.name)) / Double(plain) : 0))
    }
}

if CommandLine.arguments.contains("--hot-path") {
    try await measureHotPath()
    exit(0)
}

if CommandLine.arguments.contains("--frames") {
    try measureFrames()
    exit(0)
}

if CommandLine.arguments.contains("--hook-only") {
    try await measureHook()
    exit(0)
}

print("Spoor tracker benchmarks (release build expected); samples \(samples), 2 threads x \(perThread) events, \(rounds) rounds")

if !CommandLine.arguments.contains("--profile-track") { measureWriterParts() }

do {
    let (tracker, directory) = try makeTracker()
    let backToBack = measureLatency(name: "track(), \(eventLabel), back to back") { i in
        let call = calls[i & callMask]
        _ = tracker.track(call.name, properties: call.properties)
    }
    await tracker.flush()
    // `--profile-track`: only the back-to-back calls, for `perf record` of the caller's path.
    if CommandLine.arguments.contains("--profile-track") {
        print(backToBack.line())
        exit(0)
    }
    let paced = measureLatency(name: "track(), \(eventLabel), 1 per 5 µs", pause: 5_000) { i in
        let call = calls[i & callMask]
        _ = tracker.track(call.name, properties: call.properties)
    }
    await tracker.flush()
    let literal = measureLatency(name: "track(), 5-property literal at call site") { i in
        _ = tracker.track("BuyProduct", properties: [
            "product": "tea", "price": 3.5, "quantity": .int(Int64(i)), "gift": false, "tags": ["green", "loose"],
        ])
    }
    await tracker.shutdown(timeout: .seconds(60))
    try? FileManager.default.removeItem(at: directory)
    print("clock overhead subtracted: \(backToBack.overhead) ns")
    print(backToBack.line())
    print(paced.line())
    print(literal.line())
    print("counters: accepted \(tracker.counters.accepted), dropped by log \(tracker.counters.droppedByLog)")
}

do {
    var rates: [Double] = []
    var writerCPU: [Double] = []
    for _ in 0..<rounds {
        let (tracker, directory) = try makeTracker {
            $0.storage.maxEvents = 2 * perThread
            $0.storage.maxBufferedEvents = 2 * perThread
            $0.storage.maxBytes = 1 << 30
        }
        // Let the writer thread start and name itself, then read its CPU time.
        await tracker.flush()
        let writerCPUBefore = threadCPUSeconds(named: "spoor.writer")
        let start = nanoseconds()
        let group = DispatchGroup()
        for thread in 0..<2 {
            group.enter()
            Thread {
                var threadCalls = calls
                for index in threadCalls.indices { threadCalls[index].properties["thread"] = .int(Int64(thread)) }
                for i in 0..<perThread {
                    let call = threadCalls[i & callMask]
                    _ = tracker.track(call.name, properties: call.properties)
                }
                group.leave()
            }.start()
        }
        group.wait()
        let callersDone = nanoseconds()
        await tracker.flush()  // everything written to the log and synced
        let end = nanoseconds()
        let events = Double(2 * perThread)
        rates.append(events / (Double(end - start) / 1e9))
        if let before = writerCPUBefore, let after = threadCPUSeconds(named: "spoor.writer") {
            let perEvent = (after - before) / events
            writerCPU.append(perEvent)
            print(String(format: "writer thread CPU: %.2f µs per event (merge, encode, checksum, write) = %.2f M events/s per core",
                         perEvent * 1e6, 1 / perEvent / 1e6))
        }
        print(String(format: "throughput round: %.2f M events/s into the log (callers done after %.0f ms, log synced after %.0f ms), dropped %d",
                     rates.last! / 1e6, Double(callersDone - start) / 1e6, Double(end - start) / 1e6, tracker.counters.droppedByLog))
        await tracker.shutdown(timeout: .seconds(60))
        try? FileManager.default.removeItem(at: directory)
    }
    rates.sort()
    print(String(format: "sustained throughput, 2 threads into the log: median %.2f M events/s (min %.2f, max %.2f)",
                 rates[rates.count / 2] / 1e6, rates.first! / 1e6, rates.last! / 1e6))
    if !writerCPU.isEmpty {
        writerCPU.sort()
        print(String(format: "writer CPU per event: median %.2f µs", writerCPU[writerCPU.count / 2] * 1e6))
    }
    var load = [Double](repeating: 0, count: 3)
    if getloadavg(&load, 3) == 3 { print(String(format: "load average during the run: %.2f (on %d cores)", load[0], ProcessInfo.processInfo.activeProcessorCount)) }
}

// `--skip-hook` leaves the hook's rounds out (for profiling the writer without them).
if !CommandLine.arguments.contains("--skip-hook") {
    try await measureHook()
}
