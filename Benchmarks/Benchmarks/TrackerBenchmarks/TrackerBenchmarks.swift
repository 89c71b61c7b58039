import Benchmark
import Foundation
import SpoorModel
import SpoorTracker

// The reference event of issue 4: a code event with 5 properties of mixed types.
let referenceProperties: Properties = [
    "product": "tea", "price": 3.5, "quantity": 2, "gift": false, "tags": ["green", "loose"],
]

/// The tracker a benchmark's iterations share: made in `setup`, shut down in `teardown`.
final class TrackerHolder: @unchecked Sendable {
    // @unchecked: set in setup and cleared in teardown, which the framework runs before and after the iterations.
    var tracker: Tracker?
    var directory: URL?

    func open(_ configure: (inout Configuration) -> Void = { _ in }) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-bench-\(UUID().uuidString)")
        var configuration = Configuration(storageDirectory: directory)
        configuration.tracking.appVersion = "1.0"
        configure(&configuration)
        tracker = try Tracker(configuration: configuration)
        self.directory = directory
    }

    func close() async {
        await tracker?.shutdown(timeout: .seconds(60))
        if let directory { try? FileManager.default.removeItem(at: directory) }
        tracker = nil
    }
}

let latencyHolder = TrackerHolder()
let literalHolder = TrackerHolder()
let throughputHolder = TrackerHolder()

let benchmarks: @Sendable () -> Void = {
    // One `track` call per iteration, so the percentiles are those of single calls on the caller's thread.
    let perCall = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10_000,
        scalingFactor: .one,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    Benchmark("Tracker.track (5 properties)", configuration: perCall) { _ in
        blackHole(latencyHolder.tracker!.track("BuyProduct", properties: referenceProperties))
    } setup: {
        try latencyHolder.open()
    } teardown: {
        await latencyHolder.close()
    }

    Benchmark("Tracker.track (5-property literal at the call site)", configuration: perCall) { _ in
        blackHole(literalHolder.tracker!.track("BuyProduct", properties: [
            "product": "tea", "price": 3.5, "quantity": 2, "gift": false, "tags": ["green", "loose"],
        ]))
    } setup: {
        try literalHolder.open()
    } teardown: {
        await literalHolder.close()
    }

    // Two threads track 100,000 events each; the iteration ends when all are written to the log and synced.
    let perThread = 100_000
    Benchmark(
        "Tracker sustained, 2 threads x 100k events into the log",
        configuration: .init(
            metrics: [.wallClock, .throughput, .peakMemoryResident],
            timeUnits: .milliseconds,
            warmupIterations: 1,
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 20
        )
    ) { benchmark in
        let tracker = throughputHolder.tracker!
        benchmark.startMeasurement()
        let done = DispatchGroup()
        for thread in 0..<2 {
            done.enter()
            Thread {
                var properties = referenceProperties
                properties["thread"] = .int(Int64(thread))
                for _ in 0..<perThread { _ = tracker.track("BuyProduct", properties: properties) }
                done.leave()
            }.start()
        }
        done.wait()
        await tracker.flush()
        benchmark.stopMeasurement()
    } setup: {
        try throughputHolder.open {
            $0.storage.maxEvents = 1_000_000
            $0.storage.maxBufferedEvents = 1_000_000
            $0.storage.maxBytes = 1 << 30
        }
    } teardown: {
        await throughputHolder.close()
    }
}
