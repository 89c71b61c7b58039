package import Foundation
import SpoorModel

/// The preset properties of docs/events.md, "Property order", read once when a tracker is created.
package enum PresetProperties {
    /// Spoor's version, `$lib_version`.
    package static var libVersion: String { SpoorVersion.current }

    /// The platform name, `$lib`.
    package static var platform: String {
        #if os(Linux)
        "Linux"
        #elseif os(iOS)
        "iOS"
        #elseif os(macOS)
        "macOS"
        #elseif os(tvOS)
        "tvOS"
        #elseif os(watchOS)
        "watchOS"
        #else
        "unknown"
        #endif
    }

    /// Reads the system's description: `uname`, `/etc/os-release`, `/sys/class/dmi/id`; "unknown" where unreadable.
    /// The presets that describe the device the tracker runs on, which ``Configuration/Tracking/devicePresets``
    /// leaves out (a server's events are about its users, not its host). `$device_id`, `$lib`, `$lib_version` and
    /// `$app_version` stay: they name the install and the software that sent the event.
    package static let deviceKeys = ["$os", "$os_version", "$model", "$manufacturer", "$timezone_offset", "$screen_width", "$screen_height"]

    package static func read(
        appVersion: String, deviceID: String, timeZone: TimeZone, now: EpochMilliseconds, root: String = ""
    ) -> Properties {
        let uname = unameFields()
        let osRelease = parseOSRelease(readText(root + "/etc/os-release") ?? readText(root + "/usr/lib/os-release") ?? "")
        var os = osRelease["NAME"] ?? uname.sysname
        var osVersion = osRelease["VERSION_ID"] ?? uname.release
        #if canImport(Darwin)
        os = platform
        let version = ProcessInfo.processInfo.operatingSystemVersion
        osVersion = "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
        #endif
        if os.isEmpty { os = "unknown" }
        if osVersion.isEmpty { osVersion = "unknown" }
        let model = readText(root + "/sys/class/dmi/id/product_name").map(trimmed).flatMap { $0.isEmpty ? nil : $0 }
            ?? "unknown"
        let manufacturer = readText(root + "/sys/class/dmi/id/sys_vendor").map(trimmed).flatMap { $0.isEmpty ? nil : $0 }
            ?? "unknown"
        let offsetSeconds = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(now) / 1000))
        return [
            "$os": .string(os),
            "$os_version": .string(osVersion),
            "$model": .string(model),
            "$manufacturer": .string(manufacturer),
            "$app_version": .string(appVersion),
            // JavaScript's getTimezoneOffset sign: UTC+8 is -480.
            "$timezone_offset": .int(Int64(-offsetSeconds / 60)),
            "$device_id": .string(deviceID),
            "$lib": .string(platform),
            "$lib_version": .string(libVersion),
        ]
    }

    private static func unameFields() -> (sysname: String, release: String) {
        var info = utsname()
        guard uname(&info) == 0 else { return ("", "") }
        func field<T>(_ value: inout T) -> String {
            withUnsafeBytes(of: &value) { raw in
                let bytes = raw.prefix { $0 != 0 }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        return (field(&info.sysname), field(&info.release))
    }

    private static func readText(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), data.count < 64 << 10 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func trimmed(_ s: String) -> String { s.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// `KEY=value` lines, values optionally quoted.
    static func parseOSRelease(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let equals = line.firstIndex(of: "="), !line.hasPrefix("#") else { continue }
            let key = String(line[..<equals])
            var value = trimmed(String(line[line.index(after: equals)...]))
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            result[key] = value
        }
        return result
    }
}
