import SpoorCollectorTestSupport
import SpoorCollectorCore
import SpoorCore
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
    }
}
