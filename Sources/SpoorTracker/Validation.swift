import Foundation
import SpoorModel

/// The rule an event or property broke (docs/events.md, "Validation").
public enum ValidationRule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The event name does not match `^[a-zA-Z_$][a-zA-Z0-9_$]{0,99}$`.
    case invalidEventName = "invalid_event_name"
    /// The event name is reserved (`event`, `time`, `user_group…`, …).
    case reservedEventName = "reserved_event_name"
    /// A property key does not match `^[a-zA-Z_$][a-zA-Z0-9_$]{0,99}$`.
    case invalidPropertyKey = "invalid_property_key"
    /// A property key is reserved (`distinct_id`, `time`, `user_tag…`, …).
    case reservedPropertyKey = "reserved_property_key"
    /// A double is NaN or infinite.
    case nonFiniteNumber = "non_finite_number"
    /// A list holds more than 500 strings.
    case listTooLong = "list_too_long"
    /// A profile operation got a value of the wrong type (e.g. a string for `profileIncrement`).
    case wrongValueType = "wrong_value_type"
    /// A string holds U+0000, which the wire format cannot carry.
    case nulCharacter = "nul_character"
    /// An identity (anonymous or login id) is empty, blank, longer than 255 bytes or holds U+0000.
    case invalidIdentity = "invalid_identity"
    /// ``Configuration/Tracking/beforeRecord`` threw for the event.
    case hookThrew = "hook_threw"
    /// ``Configuration/Tracking/beforeRecord`` left the event with an invalid property (the key is given; the rule it
    /// broke goes to the log).
    case hookInvalid = "hook_invalid"

    public var description: String { rawValue }
}

/// Why an event, a property or an identity was rejected: the event, the key and the rule. (Named apart from
/// swift-argument-parser's `ValidationError`, which command-line tools built on Spoor also import.)
public struct EventRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The event name (or the operation, such as `profileSet` or `registerSuperProperties`).
    public var event: String
    /// The property key at fault, when the fault is in a property.
    public var key: String?
    /// The rule that was broken.
    public var rule: ValidationRule

    /// Creates a rejection.
    public init(event: String, key: String? = nil, rule: ValidationRule) {
        self.event = event
        self.key = key
        self.rule = rule
    }

    public var description: String {
        if let key { return "event \(event): property \(key): \(rule)" }
        return "event \(event): \(rule)"
    }
}

/// The checks of docs/events.md, "Validation". Pure functions with no I/O, cheap enough for the caller's thread.
enum PropertyValidator {
    /// Longest string value, in UTF-8 bytes, kept as is; longer ones are cut to fit with a trailing `$`.
    static let maxStringBytes = 8192
    /// Most strings in a list value.
    static let maxListCount = 500

    /// Checks a name (event name or property key) against the pattern and the reserved words.
    @inline(__always)
    static func checkName(_ name: String) -> (valid: Bool, reserved: Bool) {
        let utf8 = name.utf8
        if let result = utf8.withContiguousStorageIfAvailable({ checkName(bytes: $0) }) {
            return result
        }
        return Array(utf8).withUnsafeBufferPointer { checkName(bytes: $0) } // non-native strings only
    }

    private static func checkName(bytes: UnsafeBufferPointer<UInt8>) -> (valid: Bool, reserved: Bool) {
        guard let first = bytes.first, bytes.count <= 100 else { return (false, false) }
        guard isLetter(first) || first == UInt8(ascii: "_") || first == UInt8(ascii: "$") else { return (false, false) }
        for byte in bytes.dropFirst() where !(isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")) {
            return (false, false)
        }
        return (true, isReserved(bytes))
    }

    @inline(__always) private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
    @inline(__always) private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private static let reservedWords: [[UInt8]] = [
        "distinct_id", "original_id", "time", "properties", "id", "first_id", "second_id", "users", "events", "event",
        "user_id", "date", "datetime",
    ].map { Array($0.utf8) }
    private static let reservedPrefixes: [[UInt8]] = ["user_group", "user_tag"].map { Array($0.utf8) }

    /// Case-insensitive comparison with the reserved words; names are ASCII here, so `| 0x20` lowercases letters.
    private static func isReserved(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch bytes[0] | 0x20 {
        case UInt8(ascii: "d"), UInt8(ascii: "o"), UInt8(ascii: "t"), UInt8(ascii: "p"), UInt8(ascii: "i"),
            UInt8(ascii: "f"), UInt8(ascii: "s"), UInt8(ascii: "u"), UInt8(ascii: "e"):
            break
        default:
            return false
        }
        for word in reservedWords where word.count == bytes.count && equalsIgnoringCase(bytes, word, length: word.count) {
            return true
        }
        for prefix in reservedPrefixes where bytes.count >= prefix.count && equalsIgnoringCase(bytes, prefix, length: prefix.count) {
            return true
        }
        return false
    }

    @inline(__always)
    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ word: [UInt8], length: Int) -> Bool {
        for i in 0..<length {
            let b = bytes[i]
            let lowered = (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b
            if lowered != word[i] { return false }
        }
        return true
    }

    /// Checks an event name.
    static func check(eventName: String) -> EventRejection? {
        let (valid, reserved) = checkName(eventName)
        if !valid { return EventRejection(event: eventName, rule: .invalidEventName) }
        if reserved { return EventRejection(event: eventName, rule: .reservedEventName) }
        return nil
    }

    /// Checks one property; `nil` when it may be recorded (possibly after ``truncateLongStrings(_:)``).
    static func check(key: String, value: PropertyValue, event: String) -> EventRejection? {
        var findings = Findings()
        return check(key: key, value: value, event: event, findings: &findings)
    }

    /// Checks one property and adds what it needs besides acceptance to `findings`. Each string is looked at
    /// once: its bytes give the name check, the NUL scan and the length together.
    @inline(__always)
    private static func check(key: String, value: PropertyValue, event: String, findings: inout Findings) -> EventRejection? {
        let (valid, reserved) = checkName(key)
        if !valid { return EventRejection(event: event, key: key, rule: .invalidPropertyKey) }
        if reserved { return EventRejection(event: event, key: key, rule: .reservedPropertyKey) }
        if key.utf8.first == UInt8(ascii: "$") { findings.hasDollarKey = true }
        switch value {
        case .double(let d) where !d.isFinite:
            return EventRejection(event: event, key: key, rule: .nonFiniteNumber)
        case .string(let string):
            let (hasNUL, byteCount) = scan(string)
            if hasNUL { return EventRejection(event: event, key: key, rule: .nulCharacter) }
            if byteCount > maxStringBytes { findings.needsTruncation = true }
        case .list(let list):
            if list.count > maxListCount { return EventRejection(event: event, key: key, rule: .listTooLong) }
            for item in list {
                let (hasNUL, byteCount) = scan(item)
                if hasNUL { return EventRejection(event: event, key: key, rule: .nulCharacter) }
                if byteCount > maxStringBytes { findings.needsTruncation = true }
            }
        default:
            break
        }
        return nil
    }

    /// Whether `string` holds U+0000.
    @inline(__always)
    static func containsNUL(_ string: String) -> Bool { scan(string).hasNUL }

    /// Whether `string` holds U+0000, and its length in UTF-8 bytes, from one look at its bytes.
    @inline(__always)
    private static func scan(_ string: String) -> (hasNUL: Bool, byteCount: Int) {
        string.utf8.withContiguousStorageIfAvailable { bytes in
            (hasNUL(bytes), bytes.count)
        } ?? (string.utf8.contains(0), string.utf8.count)
    }

    @inline(__always)
    private static func hasNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Short strings (most values) are scanned inline; libc's vectorised `memchr` pays for its call on longer ones.
        if bytes.count <= 16 { return bytes.contains(0) }
        return memchr(bytes.baseAddress!, 0, bytes.count) != nil
    }

    /// What a property set needs besides acceptance.
    struct Findings {
        /// Some string is too long and must be cut.
        var needsTruncation = false
        /// Some key starts with `$`, so the never-overridable keys must be re-applied after merging.
        var hasDollarKey = false
    }

    /// Checks every property; the first failure rejects them all.
    @inline(__always)
    static func check(_ properties: Properties, event: String) -> Result<Findings, EventRejection> {
        var findings = Findings()
        for (key, value) in properties {
            if let error = check(key: key, value: value, event: event, findings: &findings) { return .failure(error) }
        }
        return .success(findings)
    }

    /// Cuts every over-long string at a character boundary so that, with the trailing `$`, it fits in 8192 bytes.
    static func truncateLongStrings(_ properties: inout Properties) {
        for (key, value) in properties {
            switch value {
            case .string(let s) where s.utf8.count > maxStringBytes:
                properties[key] = .string(truncate(s))
            case .list(let list) where list.contains(where: { $0.utf8.count > maxStringBytes }):
                properties[key] = .list(list.map { $0.utf8.count > maxStringBytes ? truncate($0) : $0 })
            default:
                break
            }
        }
    }

    static func truncate(_ s: String) -> String {
        var kept = 0
        var end = s.startIndex
        for index in s.indices {
            let next = s.index(after: index)
            let length = s.utf8.distance(from: index, to: next)
            if kept + length > maxStringBytes - 1 { break }
            kept += length
            end = next
        }
        return String(s[..<end]) + "$"
    }
}
