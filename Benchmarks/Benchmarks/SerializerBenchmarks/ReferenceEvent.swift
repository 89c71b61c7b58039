import Foundation
import SpoorModel
import SwiftProtobufSchema

/// The event every benchmark encodes: a `track` event with the usual identity fields and five
/// properties (string, int, double, bool, string). ProtobufCFloor.c holds the same values in C.
enum Reference {
    static let event = Event(
        name: "BuyProduct",
        type: .track,
        time: 1_763_769_600_123,
        trackID: 0x9E37_79B9_7F4A_7C15,
        sequence: 4711,
        distinctID: "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11",
        anonymousID: "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11",
        lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.3.4"),
        properties: [
            "product": "green-tea-500g",
            "quantity": 2,
            "price": 12.75,
            "gift": false,
            "currency": "EUR",
        ]
    )
}

// MARK: - swift-protobuf

extension Spoor_V1_Event {
    /// The swift-protobuf message holding the same event, built as an app that keeps its own
    /// event model would build it before serialising.
    init(_ event: Event) {
        self.init()
        self.event = event.name
        type = Spoor_V1_EventType(rawValue: Int(event.type.rawValue)) ?? .unspecified
        time = event.time
        trackID = event.trackID
        sequence = event.sequence
        distinctID = event.distinctID
        anonymousID = event.anonymousID
        loginID = event.loginID ?? ""
        sessionID = event.sessionID ?? ""
        originalID = event.originalID ?? ""
        var lib = Spoor_V1_Lib()
        lib.lib = event.lib.lib
        lib.libVersion = event.lib.libVersion
        lib.method = Spoor_V1_LibMethod(rawValue: Int(event.lib.method.rawValue)) ?? .unspecified
        lib.appVersion = event.lib.appVersion
        self.lib = lib
        var properties: [String: Spoor_V1_Value] = [:]
        properties.reserveCapacity(event.properties.count)
        for (key, value) in event.properties {
            var message = Spoor_V1_Value()
            switch value {
            case .string(let string): message.stringValue = string
            case .int(let int): message.intValue = int
            case .double(let double): message.doubleValue = double
            case .bool(let bool): message.boolValue = bool
            case .date(let millis): message.dateValue = millis
            case .list(let items):
                var list = Spoor_V1_StringList()
                list.values = items
                message.listValue = list
            }
            properties[key] = message
        }
        self.properties = properties
    }
}

// MARK: - JSONEncoder

/// The same event as a Codable struct, in the shape of `spoor simulate`'s JSON lines.
struct JSONEvent: Codable {
    struct Lib: Codable {
        var lib: String
        var libVersion: String
        var method: String
        var appVersion: String

        enum CodingKeys: String, CodingKey {
            case lib = "$lib", libVersion = "$lib_version", method = "$lib_method", appVersion = "$app_version"
        }
    }

    /// A typed property value, written as the bare JSON value.
    enum Value: Codable {
        case string(String), int(Int64), double(Double), bool(Bool), date(Int64), list([String])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let string): try container.encode(string)
            case .int(let int), .date(let int): try container.encode(int)
            case .double(let double): try container.encode(double)
            case .bool(let bool): try container.encode(bool)
            case .list(let items): try container.encode(items)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) { self = .bool(bool) }
            else if let int = try? container.decode(Int64.self) { self = .int(int) }
            else if let double = try? container.decode(Double.self) { self = .double(double) }
            else if let string = try? container.decode(String.self) { self = .string(string) }
            else { self = .list(try container.decode([String].self)) }
        }
    }

    var event: String
    var type: String
    var time: Int64
    var trackID: UInt64
    var sequence: UInt64
    var distinctID: String
    var anonymousID: String
    var loginID: String?
    var lib: Lib
    var properties: [String: Value]

    enum CodingKeys: String, CodingKey {
        case event, type, time, trackID = "track_id", sequence, distinctID = "distinct_id"
        case anonymousID = "anonymous_id", loginID = "login_id", lib, properties
    }

    init(_ event: Event) {
        self.event = event.name
        type = event.type.name
        time = event.time
        trackID = event.trackID
        sequence = event.sequence
        distinctID = event.distinctID
        anonymousID = event.anonymousID
        loginID = event.loginID
        lib = Lib(lib: event.lib.lib, libVersion: event.lib.libVersion, method: event.lib.method.name, appVersion: event.lib.appVersion)
        properties = event.properties.mapValues { value in
            switch value {
            case .string(let string): .string(string)
            case .int(let int): .int(int)
            case .double(let double): .double(double)
            case .bool(let bool): .bool(bool)
            case .date(let millis): .date(millis)
            case .list(let items): .list(items)
            }
        }
    }
}
