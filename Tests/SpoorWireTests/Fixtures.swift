import SpoorModel
import SpoorWire

/// Events and byte helpers shared by the serializer tests.
enum Fixtures {
    static let lib = LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "1.2.3")

    static func event(_ properties: Properties = [:], name: String = "BuyProduct") -> Event {
        Event(name: name, type: .track, time: 1_767_225_600_123, trackID: 0xDEAD_BEEF_0123_4567, sequence: 42,
              distinctID: "user-1", anonymousID: "anon-1", loginID: "user-1", lib: lib,
              properties: properties, sessionID: "session-1")
    }

    /// The reference event of the benchmarks: name, time and five properties.
    static let reference = event(["product": "green tea", "quantity": 3, "price": 12.5, "gift": false, "channel": "search"])

    static func encode(_ event: Event) throws -> [UInt8] {
        try EventEncoder().encode(event)
    }
}

