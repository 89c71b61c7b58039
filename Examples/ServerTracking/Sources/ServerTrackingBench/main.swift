// What tracking adds to a request: TrackingMiddleware's `handle` timed call by call against a middleware that only
// hands the request on, in the same run, alternating in rounds, over the same requests from 50 users.
//
//   swift run -c release --package-path Examples/ServerTracking server-tracking-bench [ROUNDS] [PER_ROUND]
//
// Between rounds the tracker's writer catches up (`flush`): a server's requests arrive no faster than its HTTP stack
// serves them, far below what the writer stores, so the caller's cost is measured, not a backlog's. The tracker
// keeps its events in a temporary directory (room for all of them) and uploads nothing (uploads run on threads of
// their own, off the request's path).
import Foundation
import Hummingbird
import Logging
import RequestTracking
import SpoorTracker

/// The least a request context can be: a logger (nothing here reads it).
struct BenchContext: RequestContext {
    struct Source: RequestContextSource { var logger: Logger }
    var coreContext: CoreRequestContextStorage
    init(source: Source) { coreContext = CoreRequestContextStorage(source: source) }
}

/// The baseline: hands the request on, as any middleware must.
struct PassThrough: RouterMiddleware {
    func handle(_ request: Request, context: BenchContext, next: (Request, BenchContext) async throws -> Response) async throws -> Response {
        try await next(request, context)
    }
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = arguments.first ?? 40
let perRound = arguments.dropFirst().first ?? 5_000

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-tracking-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
var configuration = Configuration.server(storageDirectory: directory, serverURL: nil)
configuration.storage.maxEvents = max(10_000, rounds * perRound)  // every event kept: the log never drops the oldest
let tracker = try Tracker(configuration: configuration)
let tracking = TrackingMiddleware<BenchContext>(tracker: tracker)
let passThrough = PassThrough()

let requests = (0..<50).map { user in
    var fields = HTTPFields()
    fields[TrackingMiddleware<BenchContext>.userHeader] = "user-\(user)"
    return Request(head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/hello", headerFields: fields),
                   body: RequestBody(buffer: ByteBuffer()))
}
let context = BenchContext(source: .init(logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }))
let response = Response(status: .ok)
let next: @Sendable (Request, BenchContext) async throws -> Response = { _, _ in response }

/// Times each of `count` calls of `middleware`, in nanoseconds.
func time(_ middleware: some RouterMiddleware<BenchContext>, _ count: Int) async throws -> [Int64] {
    var samples: [Int64] = []
    samples.reserveCapacity(count)
    let clock = ContinuousClock()
    for index in 0..<count {
        let request = requests[index % requests.count]
        let start = clock.now
        _ = try await middleware.handle(request, context: context, next: next)
        let elapsed = start.duration(to: clock.now)
        samples.append(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
    return samples
}

var baseline: [Int64] = []
var tracked: [Int64] = []
baseline.reserveCapacity(rounds * perRound)
tracked.reserveCapacity(rounds * perRound)
let writerStart = ContinuousClock.now
for round in 0..<rounds {
    // Alternating which goes first, so neither always follows the writer's catch-up.
    if round % 2 == 0 {
        baseline += try await time(passThrough, perRound)
        tracked += try await time(tracking, perRound)
    } else {
        tracked += try await time(tracking, perRound)
        baseline += try await time(passThrough, perRound)
    }
    _ = await tracker.flush()
}
let writerSeconds = Double((ContinuousClock.now - writerStart).components.seconds)
    + Double((ContinuousClock.now - writerStart).components.attoseconds) / 1e18

func percentile(_ sorted: [Int64], _ p: Double) -> Int64 { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
let sortedBaseline = baseline.sorted()
let sortedTracked = tracked.sorted()
print("requests timed: \(tracked.count) tracked, \(baseline.count) pass-through (\(rounds) rounds of \(perRound))")
print("percentile  pass-through ns  tracking ns  added ns")
for (name, p) in [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999), ("max", 1.0)] {
    let base = percentile(sortedBaseline, p)
    let with = percentile(sortedTracked, p)
    print(name.padding(toLength: 12, withPad: " ", startingAt: 0), String(base).padding(toLength: 16, withPad: " ", startingAt: 0),
          String(with).padding(toLength: 12, withPad: " ", startingAt: 0), with - base)
}
// The tail apart: calls that took over 100 µs, and their share of all the time spent.
for (name, samples) in [("pass-through", baseline), ("tracking", tracked)] {
    let slow = samples.filter { $0 > 100_000 }
    print("\(name): \(slow.count) calls over 100 µs, \(Int(Double(slow.reduce(0, +)) * 100 / Double(samples.reduce(0, +))))% of its time")
}
let meanBase = Double(baseline.reduce(0, +)) / Double(baseline.count)
let meanTracked = Double(tracked.reduce(0, +)) / Double(tracked.count)
print(String(format: "mean        %.0f ns vs %.0f ns: %.0f ns added", meanBase, meanTracked, meanTracked - meanBase))
let counters = tracker.counters
print("tracker: accepted \(counters.accepted), rejected \(counters.rejected.values.reduce(0, +)), "
      + "dropped at the full buffer \(counters.droppedWhenBufferFull), "
      + String(format: "%.0f events/s stored over the whole run", Double(counters.accepted) / writerSeconds))
await tracker.shutdown()
