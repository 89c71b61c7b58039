package import Foundation
import SpoorLog
import Logging
package import SpoorModel

/// What survives a restart (docs/events.md, "Identity"): identity, super properties, first-launch and first-day flags,
/// and the sequence number. Kept as one small JSON file, replaced atomically.
package struct PersistedState: Codable, Equatable, Sendable {
    package var version = 1
    package var deviceID: String
    package var anonymousID: String
    package var loginID: String?
    package var superProperties: [String: StoredValue]
    /// The install's first calendar day, `yyyy-MM-dd` in the configured time zone.
    package var firstDay: String
    /// True until the lifecycle code consumes it for `$is_first_time`.
    package var firstLaunchPending: Bool
    /// The sequence number the next record gets.
    package var nextSequence: UInt64
    /// The user opted out of tracking (``Tracker/optOut(deleteStoredData:)``). Absent in state files written
    /// before consent existed, which were tracking: read as false.
    package var optedOut: Bool

    package init(
        deviceID: String, anonymousID: String, loginID: String?, superProperties: [String: StoredValue], firstDay: String,
        firstLaunchPending: Bool, nextSequence: UInt64, optedOut: Bool = false
    ) {
        self.deviceID = deviceID
        self.anonymousID = anonymousID
        self.loginID = loginID
        self.superProperties = superProperties
        self.firstDay = firstDay
        self.firstLaunchPending = firstLaunchPending
        self.nextSequence = nextSequence
        self.optedOut = optedOut
    }

    private enum CodingKeys: String, CodingKey {
        case version, deviceID, anonymousID, loginID, superProperties, firstDay, firstLaunchPending, nextSequence, optedOut
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        deviceID = try c.decode(String.self, forKey: .deviceID)
        anonymousID = try c.decode(String.self, forKey: .anonymousID)
        loginID = try c.decodeIfPresent(String.self, forKey: .loginID)
        superProperties = try c.decode([String: StoredValue].self, forKey: .superProperties)
        firstDay = try c.decode(String.self, forKey: .firstDay)
        firstLaunchPending = try c.decode(Bool.self, forKey: .firstLaunchPending)
        nextSequence = try c.decode(UInt64.self, forKey: .nextSequence)
        optedOut = try c.decodeIfPresent(Bool.self, forKey: .optedOut) ?? false
    }

    static func fresh(day: String, optedOut: Bool = false) -> PersistedState {
        let device = UUID().uuidString
        return PersistedState(
            deviceID: device, anonymousID: UUID().uuidString, loginID: nil, superProperties: [:], firstDay: day,
            firstLaunchPending: true, nextSequence: 1, optedOut: optedOut)
    }
}

/// A ``PropertyValue`` in the state file: `{"int": 3}`, `{"list": ["a"]}`, …
package struct StoredValue: Codable, Equatable, Sendable {
    package var value: PropertyValue

    package init(_ value: PropertyValue) { self.value = value }

    private enum Key: String, CodingKey { case string, int, double, bool, date, list }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "one typed value expected"))
        }
        switch key {
        case .string: value = .string(try container.decode(String.self, forKey: key))
        case .int: value = .int(try container.decode(Int64.self, forKey: key))
        case .double: value = .double(try container.decode(Double.self, forKey: key))
        case .bool: value = .bool(try container.decode(Bool.self, forKey: key))
        case .date: value = .date(try container.decode(Int64.self, forKey: key))
        case .list: value = .list(try container.decode([String].self, forKey: key))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch value {
        case .string(let v): try container.encode(v, forKey: .string)
        case .int(let v): try container.encode(v, forKey: .int)
        case .double(let v): try container.encode(v, forKey: .double)
        case .bool(let v): try container.encode(v, forKey: .bool)
        case .date(let v): try container.encode(v, forKey: .date)
        case .list(let v): try container.encode(v, forKey: .list)
        }
    }
}

/// Reads and atomically replaces `state.json` in the storage directory.
package struct PersistentStateFile: Sendable {
    package enum LoadOutcome: Equatable, Sendable {
        case loaded
        case created
        /// The file was unreadable; it was moved aside to `state.json.corrupt` and a fresh state was made.
        case replacedCorrupt(reason: String)
    }

    package let url: URL

    package init(directory: URL) {
        url = directory.appendingPathComponent(StorageLayout.trackerStateName)
    }

    /// `optedOut` is the consent of a fresh install (``Configuration/Tracking/startsOptedOut``).
    package func load(today: String, optedOut: Bool = false) -> (PersistedState, LoadOutcome) {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return (.fresh(day: today, optedOut: optedOut), .created)
        }
        do {
            let state = try JSONDecoder().decode(PersistedState.self, from: data)
            guard state.version == 1, !state.anonymousID.isEmpty, !state.deviceID.isEmpty,
                state.superProperties.allSatisfy({ PropertyValidator.check(key: $0.key, value: $0.value.value, event: "state") == nil })
            else {
                throw CocoaError(.coderInvalidValue)
            }
            return (state, .loaded)
        } catch {
            let aside = url.deletingLastPathComponent().appendingPathComponent(StorageLayout.corruptTrackerStateName)
            try? FileManager.default.removeItem(at: aside)
            try? FileManager.default.moveItem(at: url, to: aside)
            return (.fresh(day: today, optedOut: optedOut), .replacedCorrupt(reason: "\(error)"))
        }
    }

    /// Writes to a temporary file, forces it to disk, then renames it over the old one.
    package func save(_ state: PersistedState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write([UInt8](try encoder.encode(state)), to: url, durable: true)
    }
}

/// Calendar days in a time zone, for `$is_first_day`.
struct CalendarDay: Sendable {
    let calendar: Calendar

    init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    func name(of time: EpochMilliseconds) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(time) / 1000))
        let y = parts.year ?? 1970, m = parts.month ?? 1, d = parts.day ?? 1
        return "\(y)-\(m < 10 ? "0" : "")\(m)-\(d < 10 ? "0" : "")\(d)"
    }

    /// The day's bounds in epoch milliseconds, `start..<end`.
    func range(of name: String) -> Range<EpochMilliseconds>? {
        let parts = name.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3,
            let start = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
            let end = calendar.date(byAdding: .day, value: 1, to: start)
        else { return nil }
        return EpochMilliseconds(start.timeIntervalSince1970 * 1000)..<EpochMilliseconds(end.timeIntervalSince1970 * 1000)
    }
}
