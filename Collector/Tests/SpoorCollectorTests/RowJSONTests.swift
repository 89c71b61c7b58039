import Foundation
import SpoorCollectorTestSupport
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorModel
import SpoorWire
import Testing

@Suite("The rows' JSON columns")
struct RowJSONTests {
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
        let row = EventRow(event, idx: 0)
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
        let events = try EventDecoder().decodeBatch(payload).enumerated().map { EventRow($1, idx: $0) }
        var views: [EventRow] = []
        let decoder = EventDecoder()
        try payload.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in
                try decoder.forEachEventView(inBatch: raw) { view in views.append(EventRow(view, idx: views.count)) }
            }
        }.get()
        return (views, events)
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
            let body = [UInt8](try Data(contentsOf: corpus.appendingPathComponent(file)))
            switch (fast.decode(body, receivedAt: 0), reference.decode(body, receivedAt: 0)) {
            case (.success(let a), .success(let b)):
                decoded += 1
                #expect(a.0.events == b.0.events, "\(file)")
            case (.failure(let a), .failure(let b)):
                #expect(a == b, "\(file)")
            default:
                Issue.record("\(file): one path decoded what the other refused")
            }
        }
        #expect(decoded >= 3)
    }
}
