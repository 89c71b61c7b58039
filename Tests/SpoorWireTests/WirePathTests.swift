#if SPOOR_SYSTEM_LIBRARIES
import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire
import SpoorWorkload
import Testing

/// The two wire paths (docs/wire-paths.md) in one process: the Swift encoder writes protobuf-c's bytes, and the
/// Swift decoder gives protobuf-c's events, views and errors, for generated events, the golden vectors, the
/// workloads, every fuzz corpus and mutated inputs. Only a build with both (the `SystemLibraries` trait) can hold
/// them equal; an Apple build has the Swift path alone.
@Suite struct WirePathTests {
    // MARK: Encoding

    @Test func randomEventsEncodeToTheSameBytes() throws {
        var random = SplitMix64(seed: 0x5EED_0027)
        let swift = EventEncoder(path: .swift), c = EventEncoder(path: .protobufC)
        for round in 0..<3000 {
            let event = WireSamples.event(&random)
            let suffix = round % 7 == 0 ? try c.encode(WireSamples.event(&random)) : []
            #expect(WireSamples.encodings(event, suffix: suffix, swift) == WireSamples.encodings(event, suffix: suffix, c), "event \(round): \(event)")
        }
    }

    @Test func eventsTheEncodersRefuseFailAlike() throws {
        var random = SplitMix64(seed: 0xBAD_0027)
        let swift = EventEncoder(path: .swift), c = EventEncoder(path: .protobufC)
        var refused = 0
        for round in 0..<800 {
            let event = WireSamples.poisoned(WireSamples.event(&random), &random)
            let outcomes = [swift, c].map { encoder in
                var buffer: [UInt8] = [7]
                let result = Result { () throws(EncodeError) in try encoder.appendBatchEntry(event, to: &buffer) }
                return (result.map { buffer }, buffer)
            }
            #expect(outcomes[0].0 == outcomes[1].0, "event \(round): \(event)")
            if case .failure = outcomes[0].0 {
                refused += 1
                // On error the buffer is left as it was.
                #expect(outcomes[0].1 == [7] && outcomes[1].1 == [7])
            }
        }
        #expect(refused > 300)
    }

    @Test func goldenVectorsAndWorkloadsEncodeToTheSameBytes() throws {
        let swift = EventEncoder(path: .swift), c = EventEncoder(path: .protobufC)
        let decoder = EventDecoder(path: .protobufC)
        // The vectors' payloads were written by protobuf-c; the Swift path writes them again, byte for byte.
        for codec in Codec.allCases {
            let frame = try FrameDecoder().decode(Array(try Data(contentsOf: WireSamples.root.appendingPathComponent("docs/vectors/\(codec).spb"))))
            var again: [UInt8] = []
            for event in try decoder.decodeBatch(frame.payload) { try swift.appendBatchEntry(event, to: &again) }
            #expect(again == frame.payload, "\(codec).spb")
        }
        for kind in Workload.Kind.allCases {
            var workload = Workload(kind, seed: 27)
            var bySwift: [UInt8] = [], byC: [UInt8] = []
            for event in workload.events(500) {
                try swift.appendBatchEntry(event, to: &bySwift)
                try c.appendBatchEntry(event, to: &byC)
            }
            #expect(bySwift == byC, "\(kind)")
            #expect(LegacySharedContext.factor(bySwift) == LegacySharedContext.factor(byC))
        }
    }

    // MARK: Decoding

    @Test func fuzzCorporaDecodeAlike() throws {
        var inputs = 0
        for folder in ["Corpus", "FailCases"] {
            let directory = WireSamples.root.appendingPathComponent("Fuzz/\(folder)")
            for target in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
                let files = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(target).path)
                for file in files.sorted() where !file.hasPrefix("README") && !file.hasPrefix(".") {
                    let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(target).appendingPathComponent(file)))
                    for input in WireSamples.payloads(in: bytes) {
                        WireSamples.expectAlike(input, "\(folder)/\(target)/\(file)")
                        inputs += 1
                    }
                }
            }
        }
        #expect(inputs > 3000)
    }

    @Test func mutatedEventsAndBatchesDecodeAlike() throws {
        var random = SplitMix64(seed: 0x3A7E_0027)
        let encoder = EventEncoder(path: .protobufC)
        var decodedSome = 0
        for round in 0..<1500 {
            var batch: [UInt8] = []
            for _ in 0..<Int(random.next() % 4) + 1 { try encoder.appendBatchEntry(WireSamples.event(&random), to: &batch) }
            if round % 2 == 0 { batch = LegacySharedContext.factor(batch) }
            let mutated = WireSamples.mutate(batch, &random)
            WireSamples.expectAlike(mutated, "round \(round)")
            // The first entry's body as one event, mutated too.
            if let length = mutated.dropFirst().first, Int(length) < mutated.count - 2 {
                WireSamples.expectAlike(Array(mutated[2..<2 + Int(length)]), "round \(round), first entry")
            }
            if (try? EventDecoder(path: .swift).decodeBatch(mutated)) != nil { decodedSome += 1 }
        }
        // Mutations that keep a batch valid show that both accept alike, not only refuse alike.
        #expect(decodedSome > 100)
    }

    @Test func randomBytesDecodeAlike() {
        var random = SplitMix64(seed: 0xB17E_0027)
        for round in 0..<3000 {
            let count = Int(random.next() % 48)
            // Bytes biased toward the schema's tags and small lengths, so that the walk gets past the first field.
            let alphabet: [UInt8] = [0x08, 0x0A, 0x10, 0x12, 0x18, 0x21, 0x28, 0x32, 0x4A, 0x52, 0x1A, 0x20, 0x3A, 0x68, 0x70, 0x78,
                                     0x00, 0x01, 0x02, 0x03, 0x80, 0xFF, 0x7F, 0xC3, 0xA9, 0xED, 0xA0, 0x0B, 0x0F]
            let bytes = (0..<count).map { _ in random.next() % 3 == 0 ? UInt8(truncatingIfNeeded: random.next()) : alphabet[Int(random.next() % UInt64(alphabet.count))] }
            WireSamples.expectAlike(bytes, "round \(round)")
        }
    }

    @Test func limitsAreTheSameOnBothPaths() throws {
        var random = SplitMix64(seed: 0x1111_0027)
        let encoder = EventEncoder(path: .protobufC)
        for round in 0..<400 {
            var batch: [UInt8] = []
            for _ in 0..<3 { try encoder.appendBatchEntry(WireSamples.event(&random), to: &batch) }
            if round % 2 == 1 { batch = LegacySharedContext.factor(batch) }
            let limits = DecodeLimits(
                maxEventBytes: Int(random.next() % 400), maxProperties: Int(random.next() % 12),
                maxStringBytes: Int(random.next() % 24), maxListLength: Int(random.next() % 4))
            WireSamples.expectAlike(batch, "round \(round), \(limits)", limits: limits)
        }
    }

    /// protobuf-c's reading of what the scan passes, each rule on its own, so that a change in either path names it.
    @Test(arguments: [
        ("a tag in six bytes", [0x90, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01] as [UInt8]),
        ("a tag in five bytes", [0x90, 0x80, 0x80, 0x80, 0x00, 0x01]),
        ("a length prefix in six bytes", [0x10, 0x01, 0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
        ("an unknown field's length in six bytes", [0x10, 0x01, 0xA2, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
        ("two lists in one value", [0x10, 0x01, 0x52, 0x0E, 0x0A, 0x01, 0x6B, 0x12, 0x09, 0x32, 0x03, 0x0A, 0x01, 0x61, 0x32, 0x02, 0x0A, 0x00]),
        ("two values in one entry", [0x10, 0x01, 0x52, 0x0C, 0x0A, 0x01, 0x6B, 0x12, 0x02, 0x10, 0x0A, 0x12, 0x03, 0x0A, 0x01, 0x78]),
        ("a string then a list", [0x10, 0x01, 0x52, 0x0D, 0x0A, 0x01, 0x6B, 0x12, 0x08, 0x0A, 0x01, 0x73, 0x32, 0x03, 0x0A, 0x01, 0x61]),
        ("two keys, the last empty", [0x10, 0x01, 0x52, 0x09, 0x0A, 0x01, 0x6B, 0x0A, 0x00, 0x12, 0x02, 0x20, 0x01]),
        ("two libs, the method in the first", [0x10, 0x01, 0x4A, 0x05, 0x18, 0x02, 0x0A, 0x01, 0x61, 0x4A, 0x03, 0x0A, 0x01, 0x62]),
        ("a context reference past 32 bits", [0x10, 0x01, 0x68, 0x81, 0x80, 0x80, 0x80, 0x10]),
        ("a negative type", [0x10, 0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ("an entry without a value", [0x10, 0x01, 0x52, 0x03, 0x0A, 0x01, 0x6B]),
        ("an empty value", [0x10, 0x01, 0x52, 0x05, 0x0A, 0x01, 0x6B, 0x12, 0x00]),
        ("an unknown field in a value only", [0x10, 0x01, 0x52, 0x07, 0x0A, 0x01, 0x6B, 0x12, 0x02, 0x38, 0x01]),
    ])
    func protobufCReadingRules(name: String, bytes: [UInt8]) {
        WireSamples.expectAlike(bytes, name)
        WireSamples.expectAlike([0x0A, UInt8(bytes.count)] + bytes, "\(name), as a batch")
    }
}

/// Inputs and comparisons for the two paths.
enum WireSamples {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    // MARK: Events

    /// Strings that stress the encoders: empty, ASCII, multi-byte, long, and keys that sort by bytes unlike by characters.
    static let texts = ["", "a", "b", "ab", "é", "e\u{301}", "Z", "zz", "数据", "🍵", String(repeating: "x", count: 200),
                        "$os", "$screen_name", "naïve", "\u{FEFF}", "A long value with spaces", "-", "~"]

    static func text(_ random: inout SplitMix64) -> String {
        let pick = random.next() % 10
        if pick < 7 { return texts[Int(random.next() % UInt64(texts.count))] }
        let length = Int(random.next() % 40)
        let scalars = (0..<length).compactMap { _ in Unicode.Scalar(UInt32(random.next() % (pick == 9 ? 0x1_0000 : 0x80)) | 1) }
        return String(String.UnicodeScalarView(scalars))
    }

    static func value(_ random: inout SplitMix64) -> PropertyValue {
        let integers: [Int64] = [0, 1, -1, 63, -64, 64, 1 << 40, .max, .min, 1_767_225_600_123]
        let doubles: [Double] = [0, -0.0, 1.5, -2.25, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 12.5, -1e-300]
        switch random.next() % 7 {
        case 0: return .string(text(&random))
        case 1: return .int(random.next() % 2 == 0 ? integers[Int(random.next() % UInt64(integers.count))] : Int64(bitPattern: random.next()))
        case 2: return .double(random.next() % 2 == 0 ? doubles[Int(random.next() % UInt64(doubles.count))] : Double(Int64(bitPattern: random.next())) / 977)
        case 3: return .bool(random.next() % 2 == 0)
        case 4: return .date(integers[Int(random.next() % UInt64(integers.count))])
        case 5: return .list((0..<Int(random.next() % 5)).map { _ in text(&random) })
        default: return .string("")
        }
    }

    /// A random event: every field at its default now and then, every kind of value, open enum values, and now and
    /// then more than 32 properties (the C encoder sorts those another way).
    static func event(_ random: inout SplitMix64) -> Event {
        var properties: Properties = [:]
        let count = random.next() % 9 == 0 ? 33 + Int(random.next() % 40) : Int(random.next() % 8)
        for index in 0..<count { properties[random.next() % 3 == 0 ? "k\(index)" : text(&random) + "\(index % 5)"] = value(&random) }
        let types: [Int32] = [1, 2, 3, 8, 99, -5, .max, .min]
        let methods: [Int32] = [0, 1, 2, 7, -1]
        func maybe(_ random: inout SplitMix64) -> String? { random.next() % 3 == 0 ? nil : text(&random) }
        let times: [Int64] = [0, 1, -1, 1_767_225_600_123, .min, .max]
        return Event(
            name: text(&random), type: EventType(rawValue: types[Int(random.next() % UInt64(types.count))]),
            time: random.next() % 2 == 0 ? times[Int(random.next() % UInt64(times.count))] : Int64(bitPattern: random.next()),
            trackID: random.next() % 3 == 0 ? 0 : random.next(), sequence: random.next() % 4 == 0 ? 0 : random.next() >> (random.next() % 64),
            distinctID: text(&random), anonymousID: text(&random), loginID: maybe(&random),
            lib: LibInfo(lib: text(&random), libVersion: text(&random), method: LibMethod(rawValue: methods[Int(random.next() % UInt64(methods.count))]),
                         appVersion: text(&random)),
            properties: properties, sessionID: maybe(&random), originalID: maybe(&random))
    }

    /// `event` with something neither encoder accepts now and then: a NaN or an infinity, a NUL in some string.
    static func poisoned(_ event: Event, _ random: inout SplitMix64) -> Event {
        var event = event
        let nul = "a\u{0}b"
        switch random.next() % 8 {
        case 0: event.properties["nan\(random.next() % 3)"] = .double(.nan)
        case 1: event.properties["inf"] = .double(random.next() % 2 == 0 ? .infinity : -.infinity)
        case 2: event.name = nul
        case 3: event.loginID = nul
        case 4: event.lib.appVersion = nul
        case 5: event.properties[nul] = .int(1)
        case 6: event.properties["list"] = .list(["ok", nul])
        default: event.properties["nul"] = .string(nul); event.properties["nan"] = .double(.nan)
        }
        return event
    }

    /// Every way an encoder writes `event`.
    static func encodings(_ event: Event, suffix: [UInt8], _ encoder: EventEncoder) -> Result<[[UInt8]], EncodeError> {
        Result { () throws(EncodeError) in
            var entry: [UInt8] = [1, 2, 3], withSuffix: [UInt8] = [], context: [UInt8] = []
            try encoder.appendBatchEntry(event, to: &entry)
            try encoder.appendBatchEntry(event, suffix: suffix, to: &withSuffix)
            try encoder.appendContextEntry(event, suffix: suffix, to: &context)
            return [try encoder.encode(event), entry, withSuffix, context]
        }
    }

    // MARK: Inputs

    /// The event and batch payloads a fuzz input stands for: itself, the payload of a frame or of a collector body
    /// (`0xFE`, a count, then a payload), and a log's records.
    static func payloads(in bytes: [UInt8]) -> [[UInt8]] {
        var payloads = [bytes]
        if bytes.count >= 2, bytes[0] == 0xFE { payloads.append(Array(bytes.dropFirst(2))) }
        if let frame = try? FrameDecoder(limits: FrameLimits(maxFrameBytes: .max, maxRecords: .max)).decode(bytes) {
            payloads.append(frame.payload)
        }
        return payloads
    }

    /// `bytes` changed a little: bits flipped, bytes set, inserted or removed, cut, or a run repeated.
    static func mutate(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int(random.next() % 3) + 1 where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 7 {
            case 0: bytes[at] ^= UInt8(1) << (random.next() % 8)
            case 1: bytes[at] = [0x00, 0x80, 0xFF, 0x7F, 0x0A, 0x12, 0x52, 0x4A][Int(random.next() % 8)]
            case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
            case 3: bytes.remove(at: at)
            case 4: bytes.removeLast(Int(random.next() % UInt64(bytes.count - at)) + 1)
            case 5:
                let end = min(bytes.count, at + Int(random.next() % 12) + 1)
                bytes.insert(contentsOf: bytes[at..<end], at: end)
            default: bytes[at] = bytes[at] &+ 1
            }
        }
        return bytes
    }

    // MARK: Comparing

    /// One view as values: every field, properties in wire order with doubles by their bits.
    struct ViewValues: Equatable {
        var fields: [[UInt8]]
        var numbers: [UInt64]
        var properties: [[UInt8]]

        init(_ view: EventView) {
            fields = [view.name, view.distinctID, view.anonymousID, view.loginID, view.sessionID, view.lib, view.libVersion,
                      view.appVersion].map(Array.init)
            numbers = [UInt64(bitPattern: Int64(view.type.rawValue)), UInt64(bitPattern: Int64(view.libMethod.rawValue)),
                       UInt64(bitPattern: view.time), view.trackID, view.sequence]
            properties = (0..<view.propertyCount).map { index in
                let property = view.property(index)
                var bytes = Array(property.key) + [0xFF, UInt8(truncatingIfNeeded: "\(property.kind)".count)]
                switch property.kind {
                case .string: bytes += property.string
                case .int, .date: bytes += withUnsafeBytes(of: property.integer) { Array($0) }
                case .double: bytes += withUnsafeBytes(of: property.double.bitPattern) { Array($0) }
                case .bool: bytes.append(property.bool ? 1 : 0)
                case .list: for item in 0..<property.listCount { bytes += [0xFE] + property.listItem(item) }
                }
                return bytes
            }
        }
    }

    /// Everything one decoder makes of `bytes`: the single event, the batch's events (re-encoded by protobuf-c, so
    /// a double's sign shows), the batch's views.
    struct Outcome: Equatable {
        var single: Result<[UInt8], DecodeError>
        var batch: Result<[[UInt8]], DecodeError>
        var views: Result<[ViewValues], DecodeError>
    }

    static func outcome(_ bytes: [UInt8], path: WirePath, limits: DecodeLimits, mergesBytes: Bool, viewsThroughFullDecode: Bool) -> Outcome {
        let decoder = EventDecoder(limits: limits, path: path)
        decoder.alwaysMergesBytes = mergesBytes
        decoder.viewsThroughProtobufC = viewsThroughFullDecode
        let encoder = EventEncoder(path: .protobufC)
        func bytesOf(_ event: Event) -> [UInt8] { (try? encoder.encode(event)) ?? [0xDE, 0xAD] }
        let single = Result { () throws(DecodeError) in bytesOf(try decoder.decode(bytes)) }
        let batch = Result { () throws(DecodeError) in try decoder.decodeBatch(bytes).map(bytesOf) }
        let views = bytes.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in
                var all: [ViewValues] = []
                try decoder.forEachEventView(inBatch: raw) { all.append(ViewValues($0)) }
                return all
            }
        }
        return Outcome(single: single, batch: batch, views: views)
    }

    /// Expects both paths, each with and without its shortcuts over a shared context, to make the same of `bytes`.
    static func expectAlike(_ bytes: [UInt8], _ name: String, limits: DecodeLimits = DecodeLimits(),
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let reference = outcome(bytes, path: .protobufC, limits: limits, mergesBytes: true, viewsThroughFullDecode: true)
        for (path, shortcuts) in [(WirePath.swift, true), (.swift, false), (.protobufC, true)] {
            let other = outcome(bytes, path: path, limits: limits, mergesBytes: !shortcuts, viewsThroughFullDecode: !shortcuts)
            #expect(other == reference, "\(name): \(path) (shortcuts \(shortcuts)) differs from protobuf-c", sourceLocation: sourceLocation)
        }
    }
}
#endif
