public import SpoorModel
/// The JSON-lines form of events: what `spoor simulate` and `spoor decode` print and `spoor encode` reads.
///
/// One object per event, members in a fixed order and properties sorted by
/// key, so the same event always prints the same line:
/// ```json
/// {"event":"Buy","type":"track","time":1767225600000,"track_id":"00000000000000ff","sequence":1,
///  "distinct_id":"u1","anonymous_id":"a1","login_id":"u1",
///  "lib":{"$lib":"Linux","$lib_version":"0.1.0","$lib_method":"code","$app_version":"1.2"},
///  "properties":{"price":3.5,"count":2,"at":"2026-01-01T00:00:00.000Z","tags":["a"]}}
/// ```
/// `login_id`, `session_id` and `original_id` appear only when set. Integers
/// print without a fraction and doubles always with one (or an exponent), so
/// their types survive the trip. Dates print as ISO-8601 UTC text with
/// milliseconds; reading back, a string in exactly that form is a date. A
/// date outside the years 0000–9999 prints as `{"$date": MILLIS}`. `track_id`
/// is 16 hex digits, since JSON numbers cannot carry 64 bits safely.
public enum EventJSON {
    /// The event as one line of JSON (no newline).
    public static func encode(_ event: Event) -> String {
        var members: [JSONValue.Member] = [
            .init("event", .string(event.name)),
            .init("type", json(event.type)),
            .init("time", .int(event.time)),
            .init("track_id", .string(hex(event.trackID))),
            .init("sequence", .int(Int64(bitPattern: event.sequence))),
            .init("distinct_id", .string(event.distinctID)),
            .init("anonymous_id", .string(event.anonymousID)),
        ]
        if let login = event.loginID { members.append(.init("login_id", .string(login))) }
        if let session = event.sessionID { members.append(.init("session_id", .string(session))) }
        if let original = event.originalID { members.append(.init("original_id", .string(original))) }
        members.append(.init("lib", .object([
            .init("$lib", .string(event.lib.lib)),
            .init("$lib_version", .string(event.lib.libVersion)),
            .init("$lib_method", json(event.lib.method)),
            .init("$app_version", .string(event.lib.appVersion)),
        ])))
        let properties = event.properties.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key, json($0.value)) }
        members.append(.init("properties", .object(properties)))
        return JSONValue.object(members).serialized
    }

    /// The JSON form of one property value.
    public static func json(_ value: PropertyValue) -> JSONValue {
        switch value {
        case .string(let string): .string(string)
        case .int(let int): .int(int)
        case .double(let double): .double(double)
        case .bool(let bool): .bool(bool)
        case .date(let millis): ISO8601Millis.format(millis).map(JSONValue.string) ?? .object([.init("$date", .int(millis))])
        case .list(let items): .array(items.map(JSONValue.string))
        }
    }

    /// The property value a JSON value stands for, as ``json(_:)`` writes it.
    package static func propertyValue(_ json: JSONValue, key: String) throws(EventJSONError) -> PropertyValue {
        switch json {
        case .string(let string): return ISO8601Millis.parse(string).map(PropertyValue.date) ?? .string(string)
        case .int(let int): return .int(int)
        case .double(let double): return .double(double)
        case .bool(let bool): return .bool(bool)
        case .array(let items):
            var strings: [String] = []
            strings.reserveCapacity(items.count)
            for item in items {
                guard case .string(let string) = item else {
                    throw EventJSONError(field: "properties.\(key)", reason: "a list may hold only strings, found \(item.typeName)")
                }
                strings.append(string)
            }
            return .list(strings)
        case .object(let members):
            if members.count == 1, members[0].key == "$date", case .int(let millis) = members[0].value { return .date(millis) }
            throw EventJSONError(field: "properties.\(key)", reason: "objects are not property values")
        case .null:
            throw EventJSONError(field: "properties.\(key)", reason: "null is not a property value")
        }
    }

    /// Reads one event line.
    public static func decode(_ line: String) throws(EventJSONError) -> Event {
        let json: JSONValue
        do {
            json = try JSONValue.parse(line)
        } catch {
            throw EventJSONError(field: "", reason: "invalid JSON: \(error)")
        }
        return try decode(json)
    }

    /// Reads one event from its parsed JSON.
    public static func decode(_ json: JSONValue) throws(EventJSONError) -> Event {
        guard case .object = json else { throw EventJSONError(field: "", reason: "expected an object, found \(json.typeName)") }
        let type: EventType
        if case .int(let number)? = json["type"] {
            guard number != 0, let raw = Int32(exactly: number) else {
                throw EventJSONError(field: "type", reason: "type number \(number) is 0 or outside Int32")
            }
            type = EventType(rawValue: raw)
        } else {
            let typeName = try string(json, "type")
            guard let known = EventType(name: typeName) else {
                throw EventJSONError(field: "type", reason: "unknown type \"\(typeName)\"")
            }
            type = known
        }
        guard let time = json["time"], case .int(let millis) = time else {
            throw EventJSONError(field: "time", reason: "expected integer epoch milliseconds")
        }
        var trackID: UInt64 = 0
        if json["track_id"] != nil {
            let text = try string(json, "track_id")
            guard text.utf8.count == 16, let value = UInt64(text, radix: 16) else {
                throw EventJSONError(field: "track_id", reason: "expected 16 hex digits")
            }
            trackID = value
        }
        var sequence: UInt64 = 0
        if let value = json["sequence"] {
            guard case .int(let int) = value, int >= 0 else {
                throw EventJSONError(field: "sequence", reason: "expected a non-negative integer")
            }
            sequence = UInt64(int)
        }
        guard let libJSON = json["lib"], case .object = libJSON else {
            throw EventJSONError(field: "lib", reason: "expected an object")
        }
        let method: LibMethod
        if case .int(let number)? = libJSON["$lib_method"] {
            guard let raw = Int32(exactly: number) else {
                throw EventJSONError(field: "lib.$lib_method", reason: "method number \(number) is outside Int32")
            }
            method = LibMethod(rawValue: raw)
        } else {
            let methodName = try string(libJSON, "$lib_method", path: "lib.")
            guard let known = LibMethod(name: methodName) else {
                throw EventJSONError(field: "lib.$lib_method", reason: "unknown method \"\(methodName)\"")
            }
            method = known
        }
        let lib = LibInfo(
            lib: try string(libJSON, "$lib", path: "lib."),
            libVersion: try string(libJSON, "$lib_version", path: "lib."),
            method: method,
            appVersion: try optionalString(libJSON, "$app_version", path: "lib.") ?? ""
        )
        var properties = Properties()
        if let propertiesJSON = json["properties"] {
            guard case .object(let members) = propertiesJSON else {
                throw EventJSONError(field: "properties", reason: "expected an object")
            }
            properties.reserveCapacity(members.count)
            for member in members {
                properties[member.key] = try propertyValue(member.value, key: member.key)
            }
        }
        return Event(
            name: try string(json, "event"),
            type: type,
            time: millis,
            trackID: trackID,
            sequence: sequence,
            distinctID: try string(json, "distinct_id"),
            anonymousID: try string(json, "anonymous_id"),
            loginID: try optionalString(json, "login_id"),
            lib: lib,
            properties: properties,
            sessionID: try optionalString(json, "session_id"),
            originalID: try optionalString(json, "original_id")
        )
    }

    /// A known type as its name, an unrecognized one as its number (as protobuf's JSON mapping does).
    private static func json(_ type: EventType) -> JSONValue {
        if case .unrecognized(let number) = type { return .int(Int64(number)) }
        return .string(type.name)
    }

    /// A known method as its name, an unrecognized one as its number.
    private static func json(_ method: LibMethod) -> JSONValue {
        if case .unrecognized(let number) = method { return .int(Int64(number)) }
        return .string(method.name)
    }

    private static func string(_ json: JSONValue, _ key: String, path: String = "") throws(EventJSONError) -> String {
        guard let value = try optionalString(json, key, path: path) else {
            throw EventJSONError(field: path + key, reason: "missing")
        }
        return value
    }

    private static func optionalString(_ json: JSONValue, _ key: String, path: String = "") throws(EventJSONError) -> String? {
        guard let value = json[key] else { return nil }
        guard case .string(let string) = value else {
            throw EventJSONError(field: path + key, reason: "expected a string, found \(value.typeName)")
        }
        return string
    }
}

/// Why a JSON line is not an event.
public struct EventJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The member at fault, such as `lib.$lib` or `properties.price`; empty for the line as a whole.
    public var field: String
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
}
