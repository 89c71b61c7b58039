import Foundation
import SpoorModel
import SpoorWire
import Testing

/// The named field numbers are the proto file's, name for name and number for number.
@Suite struct WireFieldsTests {
    static let proto = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("proto/spoor/v1/event.proto")

    /// The fields of each message in the proto file: name (without underscores, lowercased) → number.
    static func messages() throws -> [String: [String: UInt64]] {
        let text = try String(contentsOf: proto, encoding: .utf8)
        var messages: [String: [String: UInt64]] = [:]
        var current: String?
        var depth = 0
        let field = try Regex(#"^\s*(?:repeated\s+)?[\w.]+(?:<[\w\s,.]+>)?\s+(\w+)\s*=\s*(\d+)\s*;"#)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            if depth == 0, let match = code.firstMatch(of: try Regex(#"^\s*message\s+(\w+)"#)) {
                current = String(match.output[1].substring ?? "")
            }
            if let current, depth > 0, let match = code.firstMatch(of: field),
               let name = match.output[1].substring, let number = match.output[2].substring.flatMap({ UInt64($0) }) {
                messages[current, default: [:]][name.replacingOccurrences(of: "_", with: "").lowercased()] = number
            }
            depth += code.count(where: { $0 == "{" }) - code.count(where: { $0 == "}" })
            if depth == 0 { current = nil }
        }
        return messages
    }

    static func names<Field: CaseIterable & RawRepresentable>(_: Field.Type) -> [String: UInt64] where Field.RawValue == UInt64 {
        Dictionary(uniqueKeysWithValues: Field.allCases.map { ("\($0)".lowercased(), $0.rawValue) })
    }

    @Test func fieldNumbersMatchTheProtoFile() throws {
        let messages = try Self.messages()
        #expect(messages["Event"]?.count == 15)
        #expect(Self.names(EventField.self) == messages["Event"])
        #expect(Self.names(BatchField.self) == messages["Batch"])
        #expect(Self.names(LibField.self) == messages["Lib"])
        #expect(Self.names(ValueField.self) == messages["Value"])
    }

    @Test func batchEntryTagsAndKeys() {
        #expect(BatchField.events.tag == 0x0A)
        #expect(BatchField.contexts.tag == 0x12)
        #expect(EventField.context.key(.varint) == 0x68)
        #expect(EventField.trackID.key(.fixed64) == 0x21)
    }
}
