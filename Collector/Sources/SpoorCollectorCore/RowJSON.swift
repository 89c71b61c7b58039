import SpoorCore

/// The `lib` and `properties` columns' JSON, written straight to UTF-8 bytes.
///
/// The text is exactly `EventJSON.json(…)` then `JSONValue.serialized` (`RowJSONTests` compares them), but
/// without building the tree or appending one scalar at a time: that path was 58% of ingest's decode time
/// in a profile of `scripts/collector-load`, five times the protobuf decoding.
struct RowJSON {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// The JSON object of `members` in the order given.
    static func object(_ members: [(key: String, value: PropertyValue)]) -> String {
        var writer = RowJSON(capacity: 64 * members.count + 2)
        writer.bytes.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.string(member.key)
            writer.bytes.append(UInt8(ascii: ":"))
            writer.value(member.value)
        }
        writer.bytes.append(UInt8(ascii: "}"))
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    mutating func value(_ value: PropertyValue) {
        switch value {
        case .string(let text): string(text)
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .double(let number): bytes.append(contentsOf: JSONValue.format(number).utf8)
        case .date, .list:  // rare: the shared writer
            bytes.append(contentsOf: EventJSON.json(value).serialized.utf8)
        }
    }

    /// `text` as a JSON string literal, escaped as `JSONValue.writeString` does; runs that need no escape are
    /// copied whole.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                escape(byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        let short: Character? = switch byte {
        case UInt8(ascii: "\""): "\""
        case UInt8(ascii: "\\"): "\\"
        case 0x0A: "n"
        case 0x0D: "r"
        case 0x09: "t"
        case 0x08: "b"
        case 0x0C: "f"
        default: nil
        }
        bytes.append(UInt8(ascii: "\\"))
        if let short {
            bytes.append(contentsOf: String(short).utf8)
        } else {
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        }
    }
}
