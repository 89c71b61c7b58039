import Benchmark
import CProtobufCFloor
import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire
import SwiftProtobufSchema

/// Each benchmark encodes the reference event 1000 times per iteration (`scalingFactor: .kilo`),
/// so the scaled figures are per event. Buffers are reused wherever the API allows it.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 10_000
    )

    checkIdenticalWork()

    Benchmark("Spoor EventEncoder.append (reused buffer)") { benchmark in
        let encoder = EventEncoder()
        let event = Reference.event
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            try encoder.append(event, to: &buffer)
            blackHole(buffer.count)
        }
    }

    // The Swift wire path (what every Apple build uses) against the protobuf-c path above, in the same run.
    Benchmark("Swift path: EventEncoder.append (reused buffer)") { benchmark in
        let encoder = EventEncoder(path: .swift)
        let event = Reference.event
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            try encoder.append(event, to: &buffer)
            blackHole(buffer.count)
        }
    }

    Benchmark("protobuf-c path: EventDecoder.decode") { benchmark in
        let decoder = EventDecoder(path: .protobufC)
        let bytes = try EventEncoder().encode(Reference.event)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode(bytes))
        }
    }

    Benchmark("Swift path: EventDecoder.decode") { benchmark in
        let decoder = EventDecoder(path: .swift)
        let bytes = try EventEncoder().encode(Reference.event)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode(bytes))
        }
    }

    Benchmark("Spoor EventEncoder.encode (new array)") { benchmark in
        let encoder = EventEncoder()
        let event = Reference.event
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(event))
        }
    }

    Benchmark("swift-protobuf build + serialize") { benchmark in
        let event = Reference.event
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let bytes: [UInt8] = try Spoor_V1_Event(event).serializedBytes()
            blackHole(bytes)
        }
    }

    Benchmark("swift-protobuf serialize (prebuilt message)") { benchmark in
        let message = Spoor_V1_Event(Reference.event)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let bytes: [UInt8] = try message.serializedBytes()
            blackHole(bytes)
        }
    }

    Benchmark("Foundation JSONEncoder (Codable struct)") { benchmark in
        let encoder = JSONEncoder()
        let value = JSONEvent(Reference.event)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(value))
        }
    }

    Benchmark("protobuf-c in C (floor)") { benchmark in
        var buffer = [UInt8](repeating: 0, count: 256)
        benchmark.startMeasurement()
        buffer.withUnsafeMutableBufferPointer { out in
            for _ in benchmark.scaledIterations {
                blackHole(floor_encode_reference(out.baseAddress!, out.count))
            }
        }
    }

    // Not a competitor: the floor without protobuf-c's size pass, to show what that pass costs.
    Benchmark("protobuf-c in C, pack only (no size pass)") { benchmark in
        var buffer = [UInt8](repeating: 0, count: 256)
        benchmark.startMeasurement()
        buffer.withUnsafeMutableBufferPointer { out in
            for _ in benchmark.scaledIterations {
                blackHole(floor_pack_reference_unsized(out.baseAddress!))
            }
        }
    }
}

/// Stops the run unless every protobuf encoder produces an encoding of the same event
/// with the same size, so that the benchmarks compare the same work.
func checkIdenticalWork() {
    do {
        let spoor = try EventEncoder().encode(Reference.event)
        guard try EventEncoder(path: .swift).encode(Reference.event) == spoor else {
            fatalError("the Swift path encodes the reference event to other bytes than protobuf-c")
        }
        let swiftProtobuf: [UInt8] = try Spoor_V1_Event(Reference.event).serializedBytes()
        var floor = [UInt8](repeating: 0, count: 256)
        floor.removeSubrange(floor_encode_reference(&floor, floor.count)...)
        var unsized = [UInt8](repeating: 0, count: 256)
        unsized.removeSubrange(floor_pack_reference_unsized(&unsized)...)
        guard unsized == floor else { fatalError("the unsized pack differs from the floor's") }

        let decoder = EventDecoder()
        for (name, bytes) in [("swift-protobuf", swiftProtobuf), ("protobuf-c", floor)] {
            guard bytes.count == spoor.count, try decoder.decode(bytes) == Reference.event else {
                fatalError("\(name) encodes another event than Spoor: \(bytes.count) bytes vs \(spoor.count)")
            }
        }
        let json = try JSONDecoder().decode(JSONEvent.self, from: try JSONEncoder().encode(JSONEvent(Reference.event)))
        guard json.properties.count == Reference.event.properties.count else {
            fatalError("the JSON event lost properties")
        }
    } catch {
        fatalError("the reference event does not encode: \(error)")
    }
}
