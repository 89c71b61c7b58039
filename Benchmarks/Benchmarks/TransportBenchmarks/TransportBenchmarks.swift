import Benchmark
import Foundation
import Logging
import SpoorModel
import SpoorWire
import SpoorLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends and seals are measured per event: each iteration handles 1000 events
/// (`scalingFactor: .kilo`) in write groups of 100, so the scaled figures are per event
/// and throughput is events per second.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 5,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 5_000
    )
    TransportFixtures.printSizes()

    // The floor: the same framed bytes handed to write(2), ten write groups per iteration.
    Benchmark("write(2) of the framed bytes (floor)") { benchmark in
        let directory = TransportFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let group = TransportFixtures.group()
        let fd = open(directory.appendingPathComponent("raw").path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        defer { close(fd) }
        let framed = TransportFixtures.framedBytes(group)
        var written = 0
        benchmark.startMeasurement()
        for _ in 0..<benchmark.scaledIterations.count / 100 {
            framed.withUnsafeBytes { raw in written += write(fd, raw.baseAddress!, raw.count) }
            // Keep the file near the log's size, as the log keeps its own near its cap.
            if written > 64 << 20 {
                ftruncate(fd, 0)
                written = 0
            }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("EventLog.append, .batched (prepared write groups)") { benchmark in
        let (log, directory) = TransportFixtures.log(.batched(interval: .seconds(1)))
        defer { TransportFixtures.remove(log, directory) }
        let group = TransportFixtures.group()
        benchmark.startMeasurement()
        for _ in 0..<benchmark.scaledIterations.count / 100 { log.append(group) }
        benchmark.stopMeasurement()
    }

    Benchmark("RecordBuffer.append(entry:) + EventLog.append, .batched") { benchmark in
        let (log, directory) = TransportFixtures.log(.batched(interval: .seconds(1)))
        defer { TransportFixtures.remove(log, directory) }
        let entry = TransportFixtures.entry
        var buffer = RecordBuffer()
        benchmark.startMeasurement()
        for _ in 0..<benchmark.scaledIterations.count / 100 {
            buffer.removeAll(keepingCapacity: true)
            for _ in 0..<100 { buffer.append(entry: entry) }
            log.append(buffer)
        }
        benchmark.stopMeasurement()
    }

    Benchmark("encode + RecordBuffer.append + EventLog.append, .batched") { benchmark in
        let (log, directory) = TransportFixtures.log(.batched(interval: .seconds(1)))
        defer { TransportFixtures.remove(log, directory) }
        let encoder = EventEncoder()
        let event = TransportFixtures.event
        var buffer = RecordBuffer()
        benchmark.startMeasurement()
        for _ in 0..<benchmark.scaledIterations.count / 100 {
            buffer.removeAll(keepingCapacity: true)
            for _ in 0..<100 { try buffer.append(event, using: encoder) }
            log.append(buffer)
        }
        benchmark.stopMeasurement()
    }

    // On the real disk: an fdatasync on tmpfs costs nothing and would say nothing.
    Benchmark("EventLog.append, .always (fdatasync per write group, on disk)", configuration: .init(maxDuration: .seconds(3), maxIterations: 50)) { benchmark in
        let (log, directory) = TransportFixtures.log(.always, onDisk: true)
        defer { TransportFixtures.remove(log, directory) }
        let group = TransportFixtures.group()
        benchmark.startMeasurement()
        for _ in 0..<benchmark.scaledIterations.count / 100 { log.append(group) }
        benchmark.stopMeasurement()
    }

    for codec in Codec.allCases {
        Benchmark("seal + release, 100-event batches, \(codec)") { benchmark in
            let (log, directory) = TransportFixtures.log(.batched(interval: .seconds(1)))
            defer { TransportFixtures.remove(log, directory) }
            let group = TransportFixtures.variedGroup()
            for _ in 0..<benchmark.scaledIterations.count / 100 { log.append(group) }
            benchmark.startMeasurement()
            while let batch = try log.seal(maxRecords: 100, codec: codec) {
                try log.release(batch.id)
            }
            benchmark.stopMeasurement()
        }
    }

    for codec in Codec.allCases {
        Benchmark("BatchFrame.encode, 100 events, \(codec)") { benchmark in
            let payload = TransportFixtures.payload(count: 100)
            let id = BatchID.random()
            benchmark.startMeasurement()
            for _ in 0..<benchmark.scaledIterations.count / 100 {
                blackHole(try BatchFrame.encode(payload: payload, recordCount: 100, batchID: id, sealedAt: 0, codec: codec))
            }
        }
    }
}

/// The reference event and the logs the benchmarks write to.
enum TransportFixtures {
    /// The serializer benchmarks' reference event: a `track` event with five properties.
    static let event = Event(
        name: "BuyProduct", type: .track, time: 1_763_769_600_123, trackID: 0x9E37_79B9_7F4A_7C15, sequence: 4711,
        distinctID: "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11", anonymousID: "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11",
        lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.3.4"),
        properties: ["product": "green-tea-500g", "quantity": 2, "price": 12.75, "gift": false, "currency": "EUR"]
    )

    static let entry: [UInt8] = {
        var entry: [UInt8] = []
        try! EventEncoder().appendBatchEntry(event, to: &entry)
        return entry
    }()

    /// A write group of 100 reference events.
    static func group() -> RecordBuffer {
        var buffer = RecordBuffer()
        for _ in 0..<100 { buffer.append(entry: entry) }
        return buffer
    }

    /// The bytes a write group puts in a segment: each record framed with its 12-byte header.
    static func framedBytes(_ group: RecordBuffer) -> [UInt8] {
        let directory = scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try! EventLog(directory: directory, configuration: .init(durability: .none), logger: quiet)
        log.append(group)
        log.close()
        let segment = try! FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("seg-") }!
        return Array(try! Data(contentsOf: directory.appendingPathComponent(segment)).dropFirst(16))
    }

    /// `count` events like the reference event, varied as real traffic is (ids, times, products,
    /// prices), so compression is measured on realistic rather than identical records.
    static func payload(count: Int) -> [UInt8] {
        var random = SplitMix64(seed: 42)
        func next() -> UInt64 { random.next() }
        let products = ["green-tea-500g", "black-tea-250g", "oolong-100g", "matcha-30g", "rooibos-200g", "mate-500g"]
        let encoder = EventEncoder()
        var payload: [UInt8] = []
        var time = event.time
        for index in 0..<count {
            var varied = event
            time += Int64(next() % 90_000)
            varied.time = time
            varied.trackID = next()
            varied.sequence = UInt64(4711 + index)
            varied.properties["product"] = .string(products[Int(next() % 6)])
            varied.properties["quantity"] = .int(Int64(next() % 5 + 1))
            varied.properties["price"] = .double(Double(next() % 5000) / 100)
            varied.properties["gift"] = .bool(next() & 1 == 1)
            try! encoder.appendBatchEntry(varied, to: &payload)
        }
        return payload
    }

    /// A write group of 100 varied events (for the seal benchmarks).
    static func variedGroup() -> RecordBuffer {
        let payload = payload(count: 100)
        var buffer = RecordBuffer()
        var index = 0
        while index < payload.count {
            // Each entry: 0x0A, a varint length (one or two bytes here), the event.
            var length = Int(payload[index + 1] & 0x7F)
            var header = 2
            if payload[index + 1] & 0x80 != 0 {
                length |= Int(payload[index + 2]) << 7
                header = 3
            }
            buffer.append(entry: payload[index..<index + header + length])
            index += header + length
        }
        return buffer
    }

    static let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }

    /// On tmpfs where there is one, so the figures measure Spoor's work and not the disk's writeback
    /// (which throttles any writer of a gigabyte on a small VM); the floor writes to the same place.
    static func scratch(onDisk: Bool = false) -> URL {
        let base = !onDisk && FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
        let url = base.appendingPathComponent("spoor-bench-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A log large enough that appends rarely hit the caps (they drop the oldest when they do).
    static func log(_ durability: Durability, onDisk: Bool = false) -> (EventLog, URL) {
        let directory = scratch(onDisk: onDisk)
        let configuration = EventLog.Configuration(maxBytes: 256 << 20, maxRecords: 1_000_000, durability: durability)
        return (try! EventLog(directory: directory, configuration: configuration, logger: quiet), directory)
    }

    /// The log is made and removed in each iteration, outside the measured part.
    static func remove(_ log: EventLog, _ directory: URL) {
        log.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Bytes per event: framed on disk, and on the wire per codec for a batch of 100.
    static func printSizes() {
        let framed = framedBytes(group()).count / 100
        var line = "transport sizes per reference event: event \(entry.count - 2) B, record on disk \(framed) B; frame of 100 varied events:"
        for codec in Codec.allCases {
            let frame = try! BatchFrame.encode(payload: payload(count: 100), recordCount: 100, batchID: .random(), sealedAt: 0, codec: codec)
            line += " \(codec) \(Double(frame.count) / 100) B/event"
        }
        print(line)
    }
}
