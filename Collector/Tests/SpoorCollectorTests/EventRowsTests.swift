import Foundation
import SpoorCollectorTestSupport
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorModel
@_spi(Testing) import SpoorWire
import SpoorWorkload
import Testing

@Suite("Rows from the decoder's views: the same JSON and columns as from events", .timeLimit(.minutes(10)))
struct EventRowsTests {
    /// The text the shared JSON writer gives, which the rows' faster writer must equal.
    static func reference(_ event: Event) -> (lib: String, properties: String) {
        let lib = JSONValue.object([
            .init("$lib", .string(event.lib.lib)), .init("$lib_version", .string(event.lib.libVersion)),
            .init("$lib_method", .string(event.lib.method.name)), .init("$app_version", .string(event.lib.appVersion)),
        ]).serialized
        let properties = JSONValue.object(
            event.properties.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key, EventJSON.json($0.value)) }
        ).serialized
        return (lib, properties)
    }

    @Test("lib and properties are the same text as EventJSON through JSONValue, escapes included")
    func sameAsSharedWriter() {
        var event = Frames.events(1)[0]
        event.lib = LibInfo(lib: "Sw\"ift\\", libVersion: "1.0\n", method: .code, appVersion: "caf\u{E9} \u{1F600}")
        event.properties = [
            "plain": "text", "quote\"key": "a\"b\\c", "controls": .string("\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}"),
            "unicode": "\u{4E2D}\u{6587} \u{1F600} e\u{301}", "int": .int(-42), "big": .int(Int64.max),
            "double": .double(0.1), "whole": .double(3), "tiny": .double(1e-300), "nan": .double(.nan),
            "yes": .bool(true), "no": .bool(false), "date": .date(1_763_769_600_123), "list": .list(["a", "b\"", ""]),
            "empty": "", "": "empty key",
        ]
        let row = EventRows([event]).row(0)
        let expected = Self.reference(event)
        #expect(row.lib == expected.lib)
        #expect(row.properties == expected.properties)
        // The same event through the decoder's views gives the same row.
        var payload: [UInt8] = []
        try? EventEncoder().appendBatchEntry(event, to: &payload)
        let rows = try? Self.rowsBothWays(payload)
        #expect(rows != nil && rows?.views == rows?.events)
    }

    /// The rows of a `Batch` payload from the decoder's views and from decoded events.
    static func rowsBothWays(_ payload: [UInt8]) throws -> (views: [EventRow], events: [EventRow]) {
        (try EventRows(payload: payload).all, EventRows(try EventDecoder().decodeBatch(payload)).all)
    }

    /// The body of a one-event `Batch` entry (tag, length, body).
    static func body(of event: Event) throws -> [UInt8] {
        var entry: [UInt8] = []
        try EventEncoder().appendBatchEntry(event, to: &entry)
        var index = 1
        while entry[index] & 0x80 != 0 { index += 1 }
        return Array(entry[(index + 1)...])
    }

    /// A batch entry of raw event bytes.
    static func entry(_ body: [UInt8]) -> [UInt8] {
        var entry: [UInt8] = [0x0A]
        var length = body.count
        while length >= 0x80 {
            entry.append(UInt8(length & 0x7F) | 0x80)
            length >>= 7
        }
        entry.append(UInt8(length))
        return entry + body
    }

    @Test("rows from the decoder's views equal rows from events: realistic events, non-ASCII, unsorted and repeated keys")
    func viewRowsEqualEventRows() throws {
        var payload: [UInt8] = []
        let encoder = EventEncoder()
        for event in Frames.events(300) { try encoder.appendBatchEntry(event, to: &payload) }
        var unicode = Frames.events(1)[0]
        unicode.properties = ["\u{4E2D}\u{6587}": "x", "e\u{301}": 1, "\u{F6}x": 2, "z": .list(["\u{1F600}"]), "a": .date(5)]
        unicode.loginID = "\u{1F600}"
        try encoder.appendBatchEntry(unicode, to: &payload)
        // Protobuf merges concatenated messages: properties then arrive out of order, and a key can repeat
        // (an Event keeps the last value).
        var first = Frames.events(1)[0]
        first.properties = ["k": 1, "z": "first"]
        var second = Frames.events(1)[0]
        second.properties = ["b": 2.5, "k": "last"]
        payload += Self.entry(try Self.body(of: first) + Self.body(of: second))
        second.properties = ["a": true]
        payload += Self.entry(try Self.body(of: first) + Self.body(of: second))
        let rows = try Self.rowsBothWays(payload)
        #expect(rows.views.count == 303)
        #expect(rows.views == rows.events)
        #expect(rows.views[301].properties.contains(#""k":"last""#))
        #expect(rows.views[302].properties.hasPrefix(#"{"a":true,"k":1"#))
        // Realistic events, and the same over their shared context: its sorted keys then the event's, merged.
        for payload in try Self.workloadPayloads() {
            let rows = try Self.rowsBothWays(payload)
            #expect(rows.views.count == 150)
            #expect(rows.views == rows.events)
        }
    }

    @Test("the FuzzCollectorIngest corpus: both ingest paths answer alike and write the same rows")
    func corpusBothPaths() throws {
        let corpus = BadInputTests.repository.appendingPathComponent("Fuzz/Corpus/FuzzCollectorIngest")
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        let store = try SQLiteStore(path: nil)
        let fast = Ingest(store: store)
        let reference = Ingest(store: store, keepsEvents: true)
        var decoded = 0
        for file in files {
            let body = Frames.body(forFuzzInput: [UInt8](try Data(contentsOf: corpus.appendingPathComponent(file))))
            switch (fast.decode(body, receivedAt: 0), reference.decode(body, receivedAt: 0)) {
            case (.success(let a), .success(let b)):
                decoded += 1
                #expect(a.0.rows.all == b.0.rows.all, "\(file)")
            case (.failure(let a), .failure(let b)):
                #expect(a.status == b.status && a.body == b.body, "\(file)")
            default:
                Issue.record("\(file): one path decoded what the other refused")
            }
        }
        #expect(decoded >= 20, "the corpus holds valid frames and payloads")
    }

    // MARK: - The views' Swift pass against protobuf-c

    /// Everything an `EventView` shows, as values.
    struct ViewSnapshot: Hashable {
        var name, distinctID, anonymousID, loginID, sessionID, lib, libVersion, appVersion: [UInt8]
        var type: EventType
        var libMethod: LibMethod
        var time: Int64
        var trackID, sequence: UInt64
        var properties: [PropertySnapshot]

        init(_ view: EventView) {
            name = Array(view.name)
            distinctID = Array(view.distinctID)
            anonymousID = Array(view.anonymousID)
            loginID = Array(view.loginID)
            sessionID = Array(view.sessionID)
            lib = Array(view.lib)
            libVersion = Array(view.libVersion)
            appVersion = Array(view.appVersion)
            type = view.type
            libMethod = view.libMethod
            time = view.time
            trackID = view.trackID
            sequence = view.sequence
            properties = (0..<view.propertyCount).map { PropertySnapshot(view.property($0)) }
        }
    }

    struct PropertySnapshot: Hashable {
        var key, string: [UInt8]
        var kind: PropertyView.Kind
        var integer: Int64
        var double: UInt64
        var list: [[UInt8]]

        init(_ property: PropertyView) {
            key = Array(property.key)
            kind = property.kind
            string = property.kind == .string ? Array(property.string) : []
            integer = property.kind == .int || property.kind == .date ? property.integer : property.kind == .bool ? (property.bool ? 1 : 0) : 0
            double = property.kind == .double ? property.double.bitPattern : 0
            list = property.kind == .list ? (0..<property.listCount).map { Array(property.listItem($0)) } : []
        }
    }

    /// A payload's views, through the Swift pass or through protobuf-c, or the error either gives.
    static func views(_ payload: [UInt8], throughProtobufC: Bool, readInSwift: inout Int) -> Result<[ViewSnapshot], DecodeError> {
        let decoder = EventDecoder()
        decoder.viewsThroughProtobufC = throughProtobufC
        var views: [ViewSnapshot] = []
        defer { readInSwift += decoder.viewsReadInSwift }
        return payload.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in
                try decoder.forEachEventView(inBatch: raw) { views.append(ViewSnapshot($0)) }
                return views
            }
        }
    }

    static func views(_ payload: [UInt8], throughProtobufC: Bool) -> Result<[ViewSnapshot], DecodeError> {
        var ignored = 0
        return views(payload, throughProtobufC: throughProtobufC, readInSwift: &ignored)
    }

    /// Realistic payloads: both workloads, plain and with their shared context factored out.
    static func workloadPayloads() throws -> [[UInt8]] {
        let encoder = EventEncoder()
        var payloads: [[UInt8]] = []
        for (index, kind) in Workload.Kind.allCases.enumerated() {
            var workload = Workload(kind, seed: UInt64(index) + 7)
            var payload: [UInt8] = []
            for event in workload.events(150) { try encoder.appendBatchEntry(event, to: &payload) }
            payloads += [payload, LegacySharedContext.factor(payload)]
        }
        return payloads
    }

    @Test("the Swift pass gives protobuf-c's views: workloads plain and over shared contexts, and the event decoder's corpus")
    func swiftViewsMatchProtobufC() throws {
        let workloads = try Self.workloadPayloads()
        var payloads = workloads
        let corpus = BadInputTests.repository.appendingPathComponent("Fuzz/Corpus/FuzzEventDecoder")
        for file in try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted() {
            payloads.append([UInt8](try Data(contentsOf: corpus.appendingPathComponent(file))))
        }
        var decoded = 0
        var fastEvents = 0
        var workloadEvents = 0
        for (index, payload) in payloads.enumerated() {
            var readInSwift = 0
            let fast = Self.views(payload, throughProtobufC: false, readInSwift: &readInSwift)
            #expect(fast == Self.views(payload, throughProtobufC: true), "payload \(index)")
            if case .success(let views) = fast, !views.isEmpty { decoded += 1 }
            if index < workloads.count {
                fastEvents += readInSwift
                if case .success(let views) = fast { workloadEvents += views.count }
            }
        }
        #expect(decoded >= 50, "the corpus and workloads decode to events")
        // Both workloads, 150 events each, plain and over their shared context.
        #expect(workloadEvents == Workload.Kind.allCases.count * 150 * 2)
        #expect(fastEvents == workloadEvents, "every workload event, plain or over its context, takes the Swift pass")
    }

    @Test("the Swift pass gives protobuf-c's views or errors on damaged payloads: bytes flipped, cut, inserted")
    func swiftViewsMatchProtobufCOnDamage() throws {
        let payloads = try Self.workloadPayloads()
        var random = SplitMix64(seed: 0xDA4A6E)
        var refused = 0
        for round in 0..<1200 {
            var payload = payloads[round % payloads.count]
            // Damage near the front, where the contexts and the first events are, and anywhere.
            let span = round.isMultiple(of: 2) ? min(payload.count, 2048) : payload.count
            let at = Int(random.next() % UInt64(span))
            switch random.next() % 4 {
            case 0: payload[at] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            case 1: payload.removeSubrange(at...)
            case 2: payload.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
            default: payload[at] = [0x00, 0x80, 0xFF, 0x0A, 0x12][Int(random.next() % 5)]
            }
            let fast = Self.views(payload, throughProtobufC: false)
            #expect(fast == Self.views(payload, throughProtobufC: true), "round \(round)")
            if case .failure = fast { refused += 1 }
        }
        #expect(refused > 200, "damage is refused often enough for the errors to be compared")
    }
}
