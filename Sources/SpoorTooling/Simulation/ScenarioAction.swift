import SpoorModel
import SpoorWire

/// A malformed scenario line.
struct ScenarioError: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// One scenario line: `{"t": MS, "do": ACTION, …}`.
struct ScenarioAction {
    var t: Int64
    var name: String
    var fields: JSONValue

    init(parsing line: String, after previous: Int64) throws(ScenarioError) {
        let json: JSONValue
        do {
            json = try JSONValue.parse(line)
        } catch {
            throw ScenarioError("invalid JSON: \(error.description)")
        }
        guard case .object = json else { throw ScenarioError("expected a JSON object, got \(json.typeName)") }
        fields = json
        switch json["t"] {
        case .int(let value)?:
            guard value >= 0 else { throw ScenarioError("t: must not be negative, got \(value)") }
            guard value >= previous else { throw ScenarioError("t: \(value) is before the previous line's \(previous)") }
            t = value
        case nil: throw ScenarioError("t: missing")
        case let other?: throw ScenarioError("t: expected integer milliseconds, got \(other.typeName)")
        }
        switch json["do"] {
        case .string(let value)?: name = value
        case nil: throw ScenarioError("do: missing")
        case let other?: throw ScenarioError("do: expected string, got \(other.typeName)")
        }
    }

    func optionalString(_ key: String) throws(ScenarioError) -> String? {
        switch fields[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw ScenarioError("\(key): expected string, got \(other.typeName)")
        }
    }

    func optionalBool(_ key: String) throws(ScenarioError) -> Bool? {
        switch fields[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw ScenarioError("\(key): expected bool, got \(other.typeName)")
        }
    }

    func string(_ key: String) throws(ScenarioError) -> String {
        guard let value = try optionalString(key) else { throw ScenarioError("\(name): \(key): missing") }
        return value
    }

    func enumField<E: RawRepresentable & CaseIterable>(_ key: String, default value: E) throws(ScenarioError) -> E
    where E.RawValue == String {
        guard let raw = try optionalString(key) else { return value }
        guard let parsed = E(rawValue: raw) else {
            let known = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw ScenarioError("\(key): unknown value \"\(raw)\" (known: \(known))")
        }
        return parsed
    }

    /// Typed properties, as `spoor encode` reads them (ints stay ints, ISO-8601 strings become dates).
    func properties(_ key: String) throws(ScenarioError) -> Properties {
        switch fields[key] {
        case nil, .null?: return [:]
        case .object(let members)?:
            var properties: Properties = [:]
            for member in members {
                do {
                    properties[member.key] = try EventJSON.propertyValue(member.value, key: member.key)
                } catch {
                    throw ScenarioError(error.description)
                }
            }
            return properties
        case let other?: throw ScenarioError("\(key): expected object, got \(other.typeName)")
        }
    }
}
