import Foundation
import SpoorModel
import SpoorWire

/// The `lib` and `properties` columns' JSON, written straight to UTF-8 bytes.
///
/// The text is exactly `EventJSON.json(…)` then `JSONValue.serialized` (`RowJSONTests` compares them), but
/// without building the tree or appending one scalar at a time: that path was 58% of ingest's decode time
/// in a profile of `scripts/collector-load`, five times the protobuf decoding.
struct RowJSON {
    var bytes: [UInt8] = []

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

    /// The `properties` object of a decoded event's view, keys in the order `init(_:idx:)` sorts them.
    ///
    /// Keys are compared as bytes, which is `String`'s order only for ASCII, and a repeated key must keep its
    /// last value as ``Event`` does: an event with a non-ASCII or repeated key takes the `Event` path.
    static func properties(_ view: EventView) -> String {
        let count = view.propertyCount
        var order = Array(0..<count)
        // Bytes order and `String` order agree for ASCII keys; anything else takes the `Event` path.
        var fast = (0..<count).allSatisfy { view.property($0).key.allSatisfy { $0 < 0x80 } }
        if fast {
            // Spoor writes keys in order, so this is one comparison per key; anything else is sorted here.
            let sorted = order.indices.dropFirst().allSatisfy { compare(view.property($0 - 1).key, view.property($0).key) < 0 }
            if !sorted {
                order.sort { compare(view.property($0).key, view.property($1).key) < 0 }
                // Strictly increasing has no repeats; after sorting, a repeated key sits next to itself.
                fast = order.indices.dropFirst().allSatisfy {
                    compare(view.property(order[$0 - 1]).key, view.property(order[$0]).key) != 0
                }
            }
        }
        guard fast else {
            var properties = Properties(minimumCapacity: count)
            for index in 0..<count {
                let property = view.property(index)
                properties[String(decoding: property.key, as: UTF8.self)] = property.value
            }
            return object(properties.sorted { $0.key < $1.key })
        }
        var writer = RowJSON(capacity: 64 * count + 2)
        writer.bytes.append(UInt8(ascii: "{"))
        for (position, index) in order.enumerated() {
            if position > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            let property = view.property(index)
            writer.string(property.key)
            writer.bytes.append(UInt8(ascii: ":"))
            switch property.kind {
            case .string: writer.string(property.string)
            case .int: writer.bytes.append(contentsOf: String(property.integer).utf8)
            case .bool: writer.bytes.append(contentsOf: (property.bool ? "true" : "false").utf8)
            case .double: writer.bytes.append(contentsOf: JSONValue.format(property.double).utf8)
            case .date, .list: writer.value(property.value)
            }
        }
        writer.bytes.append(UInt8(ascii: "}"))
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// memcmp order of two byte strings, the shorter first on a tie.
    private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let result = memcmp(left, right, common)
            if result != 0 { return Int(result) }
        }
        return a.count - b.count
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
        var text = text
        text.withUTF8 { utf8 in string(UnsafeRawBufferPointer(utf8)) }
    }

    /// UTF-8 bytes as a JSON string literal, escaped as `string(_:)` escapes text.
    mutating func string(_ utf8: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[runStart..<index]))
            escape(byte)
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[runStart...]))
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
