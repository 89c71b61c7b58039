import Foundation
import SpoorModel
import SpoorWire

/// Writes a batch's rows (``EventRows``): the text columns go straight from the decoder's views into one buffer,
/// `lib` and `properties` as the `spoor decode` JSON.
///
/// The JSON is exactly `EventJSON.json(…)` then `JSONValue.serialized` (`EventRowsTests` compares them), written
/// to bytes without building the tree; runs of a string that need no escape are copied whole, eight bytes
/// checked at a time.
struct RowWriter: ~Copyable {
    private var text: GrowableBytes
    private var rows: [EventRows.Row] = []
    /// Scratch for ordering a view's properties: their keys and the order to write them in, kept for capacity.
    private var keys: [UnsafeRawBufferPointer] = []
    private var order: [Int] = []
    /// The text would have gone past its limit: the rows written are incomplete and must not be stored.
    var isOverLimit: Bool { text.isOverLimit }

    /// A writer whose text starts with room for `capacity` bytes and never holds more than `limit` (at most
    /// `Int32.max`, which the spans' offsets use): past it nothing more is written and ``isOverLimit`` is set.
    init(capacity: Int, limit: Int = Int(Int32.max)) {
        let limit = min(limit, Int(Int32.max))
        text = GrowableBytes(capacity: max(min(capacity, limit), 64), limit: limit)
    }

    consuming func finish() -> EventRows {
        let isComplete = !isOverLimit
        return EventRows(rows: rows, text: RowText(text), isComplete: isComplete)
    }

    /// Appends the row of a decoded event's view; nothing once the text is over the limit.
    mutating func append(_ view: EventView) {
        guard !isOverLimit else { return }
        let name = copy(view.name)
        let type = typeName(view.type)
        let distinctID = copy(view.distinctID)
        let anonymousID = copy(view.anonymousID)
        let loginID = view.loginID.isEmpty ? TextSpan.null : copy(view.loginID)
        let sessionID = view.sessionID.isEmpty ? TextSpan.null : copy(view.sessionID)
        let trackID = hex(TrackID.of(trackID: view.trackID, anonymousID: view.anonymousID, sequence: view.sequence))
        var start = text.count
        text.append(#"{"$lib":"#)
        string(view.lib)
        text.append(#","$lib_version":"#)
        string(view.libVersion)
        text.append(#","$lib_method":"#)
        string(view.libMethod)
        text.append(#","$app_version":"#)
        string(view.appVersion)
        text.append(UInt8(ascii: "}"))
        let lib = span(from: start)
        start = text.count
        properties(view)
        rows.append(EventRows.Row(
            idx: Int32(rows.count), timeMs: view.time, sequence: Int64(bitPattern: view.sequence),
            name: name, type: type, distinctID: distinctID, anonymousID: anonymousID, loginID: loginID,
            sessionID: sessionID, trackID: trackID, lib: lib, properties: span(from: start)
        ))
    }

    /// Appends the row of a decoded ``Event`` (the `--ndjson` path, and the reference the view path is held to);
    /// nothing once the text is over the limit.
    mutating func append(_ event: Event) {
        guard !isOverLimit else { return }
        let name = copy(event.name)
        let type = copy(event.type.name)
        let distinctID = copy(event.distinctID)
        let anonymousID = copy(event.anonymousID)
        let loginID = event.loginID.map { copy($0) } ?? .null
        let sessionID = event.sessionID.map { copy($0) } ?? .null
        let trackID = hex(TrackID.of(event))
        var start = text.count
        object([
            ("$lib", .string(event.lib.lib)),
            ("$lib_version", .string(event.lib.libVersion)),
            ("$lib_method", .string(event.lib.method.name)),
            ("$app_version", .string(event.lib.appVersion)),
        ])
        let lib = span(from: start)
        start = text.count
        object(event.properties.sorted { $0.key < $1.key })
        rows.append(EventRows.Row(
            idx: Int32(rows.count), timeMs: event.time, sequence: Int64(bitPattern: event.sequence),
            name: name, type: type, distinctID: distinctID, anonymousID: anonymousID, loginID: loginID,
            sessionID: sessionID, trackID: trackID, lib: lib, properties: span(from: start)
        ))
    }

    // MARK: - Columns

    @inline(__always)
    private func span(from start: Int) -> TextSpan {
        TextSpan(start: Int32(start), count: Int32(text.count - start))
    }

    @inline(__always)
    private mutating func copy(_ bytes: UnsafeRawBufferPointer) -> TextSpan {
        let start = text.count
        text.append(bytes)
        return span(from: start)
    }

    private mutating func copy(_ string: String) -> TextSpan {
        let start = text.count
        text.append(string)
        return span(from: start)
    }

    private mutating func typeName(_ type: EventType) -> TextSpan {
        switch type {
        case .track:
            let start = text.count
            text.append("track")
            return span(from: start)
        default: return copy(type.name)
        }
    }

    /// A track id as 16 lowercase hex digits.
    private mutating func hex(_ value: UInt64) -> TextSpan {
        let start = text.count
        text.reserve(16)
        for shift in stride(from: 60, through: 0, by: -4) {
            text.append(Self.hexDigits[Int(truncatingIfNeeded: (value >> UInt64(shift)) & 0xF)])
        }
        return span(from: start)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    // MARK: - JSON

    /// The `properties` object of a view, keys in the order `String` sorts them, a repeated key keeping its last
    /// value.
    ///
    /// Keys are compared as bytes, which is `String`'s order only for ASCII, and a repeated key must keep its
    /// last value as ``Event`` does: an event with a non-ASCII or repeated key is written through `Event`'s
    /// properties. Spoor writes keys in order, so the common cases cost one comparison per key: one sorted run, or
    /// two (a shared context's, then the event's) merged.
    private mutating func properties(_ view: EventView) {
        let count = view.propertyCount
        keys.removeAll(keepingCapacity: true)
        var descents = 0
        var split = 0
        for index in 0..<count {
            let key = view.property(index).key
            guard Self.isASCII(key) else { return slowProperties(view) }
            if index > 0, Self.compare(keys[index - 1], key) >= 0 {
                descents += 1
                split = index
            }
            keys.append(key)
        }
        order.removeAll(keepingCapacity: true)
        switch descents {
        case 0:
            order.append(contentsOf: 0..<count)
        case 1:
            // Events over a shared context hold its properties, then their own: two sorted runs to merge.
            var left = 0, right = split
            while left < split || right < count {
                if right == count || (left < split && Self.compare(keys[left], keys[right]) < 0) {
                    order.append(left)
                    left += 1
                } else {
                    if left < split, Self.compare(keys[left], keys[right]) == 0 { return slowProperties(view) }
                    order.append(right)
                    right += 1
                }
            }
        default:
            order.append(contentsOf: 0..<count)
            order.sort { Self.compare(keys[$0], keys[$1]) < 0 }
            for position in order.indices.dropFirst() where Self.compare(keys[order[position - 1]], keys[order[position]]) == 0 {
                return slowProperties(view)
            }
        }
        text.append(UInt8(ascii: "{"))
        for (position, index) in order.enumerated() {
            if position > 0 { text.append(UInt8(ascii: ",")) }
            member(view.property(index))
        }
        text.append(UInt8(ascii: "}"))
    }

    /// The properties through `Event`'s rules (the last of a repeated key wins, `String` order).
    private mutating func slowProperties(_ view: EventView) {
        var properties = Properties(minimumCapacity: view.propertyCount)
        for index in 0..<view.propertyCount {
            let property = view.property(index)
            properties[String(decoding: property.key, as: UTF8.self)] = property.value
        }
        object(properties.sorted { $0.key < $1.key })
    }

    @inline(__always)
    private mutating func member(_ property: PropertyView) {
        string(property.key)
        text.append(UInt8(ascii: ":"))
        switch property.kind {
        case .string: string(property.string)
        case .int: decimal(property.integer)
        case .bool: property.bool ? text.append("true") : text.append("false")
        case .double: text.append(JSONValue.format(property.double))
        case .date, .list: value(property.value)
        }
    }

    /// A JSON object of `members` in the order given.
    private mutating func object(_ members: [(key: String, value: PropertyValue)]) {
        text.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            string(member.key)
            text.append(UInt8(ascii: ":"))
            value(member.value)
        }
        text.append(UInt8(ascii: "}"))
    }

    private mutating func value(_ value: PropertyValue) {
        switch value {
        case .string(let string): self.string(string)
        case .int(let number): decimal(number)
        case .bool(let flag): flag ? text.append("true") : text.append("false")
        case .double(let number): text.append(JSONValue.format(number))
        case .date, .list: text.append(EventJSON.json(value).serialized)  // rare: the shared writer
        }
    }

    private mutating func string(_ string: String) {
        var string = string
        string.withUTF8 { self.string(UnsafeRawBufferPointer($0)) }
    }

    private mutating func string(_ method: LibMethod) {
        switch method {
        case .code: text.append(#""code""#)
        case .autoTrack: text.append(#""autoTrack""#)
        default: string(method.name)
        }
    }

    /// UTF-8 bytes as a JSON string literal, escaped as `JSONValue.writeString` escapes text.
    private mutating func string(_ utf8: UnsafeRawBufferPointer) {
        text.reserve(utf8.count + 2)
        text.append(UInt8(ascii: "\""))
        guard let base = utf8.baseAddress else {
            text.append(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var index = 0
        let count = utf8.count
        while index < count {
            if count - index >= 8, !Self.needsEscape(base.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F {
                text.append(UnsafeRawBufferPointer(start: base + runStart, count: index - runStart))
                escape(byte)
                runStart = index + 1
            }
            index += 1
        }
        text.append(UnsafeRawBufferPointer(start: base + runStart, count: count - runStart))
        text.append(UInt8(ascii: "\""))
    }

    /// Whether any of the word's eight bytes is a control character, `"`, `\` or DEL (a test on all eight at once).
    @inline(__always)
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let control = (word &- ones &* 0x20) & ~word & high
        return (control | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C)) | hasZero(word ^ (ones &* 0x7F))) != 0
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): text.append(#"\""#)
        case UInt8(ascii: "\\"): text.append(#"\\"#)
        case 0x0A: text.append(#"\n"#)
        case 0x0D: text.append(#"\r"#)
        case 0x09: text.append(#"\t"#)
        case 0x08: text.append(#"\b"#)
        case 0x0C: text.append(#"\f"#)
        default:
            text.append(#"\u00"#)
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0xF)])
        }
    }

    /// `value` in decimal, as `String(value)` writes it.
    private mutating func decimal(_ value: Int64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits and a sign, written from the end
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var at = buffer.count
            repeat {
                at -= 1
                buffer[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                at -= 1
                buffer[at] = UInt8(ascii: "-")
            }
            text.append(UnsafeRawBufferPointer(rebasing: buffer[at...]))
        }
    }

    // MARK: - Keys

    @inline(__always)
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        while bytes.count - index >= 8 {
            if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if base.load(fromByteOffset: index, as: UInt8.self) >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// memcmp order of two byte strings, the shorter first on a tie.
    @inline(__always)
    private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let result = memcmp(left, right, common)
            if result != 0 { return Int(result) }
        }
        return a.count - b.count
    }
}
