import Foundation
import Testing

import SpoorTracker

/// The privacy manifest against the sources: every required-reason API the library calls has its category
/// declared with a reason, and nothing is declared that the sources do not call.
@Suite("privacy manifest")
struct PrivacyManifestTests {
    /// One of Apple's required-reason API categories: the calls that need a declared reason, and the reason
    /// codes Apple defines for it.
    struct Category {
        var name: String
        /// Regular expressions matching a call in Swift or C source (comments are left out before matching).
        var calls: [String]
        var reasons: Set<String>
    }

    static let categories = [
        Category(
            name: "NSPrivacyAccessedAPICategoryUserDefaults", calls: [#"\bN?S?UserDefaults\b"#],
            reasons: ["CA92.1", "1C8F.1", "C56D.1", "AC6B.1"]),
        Category(
            // `attributesOfItem(atPath:)` returns the file's dates with its size: counted as a timestamp read.
            name: "NSPrivacyAccessedAPICategoryFileTimestamp",
            calls: [
                #"\.creationDate\b"#, #"\.modificationDate\b"#, #"\bfileModificationDate\b"#,
                #"\bcontentModificationDateKey\b"#, #"\bcreationDateKey\b"#, #"\b[f]?getattrlist(bulk|at)?\s*\("#,
                #"\b(f|l)?stat(at)?\s*\("#, #"\battributesOfItem\s*\("#,
            ],
            reasons: ["DDA9.1", "C617.1", "3B52.1", "0A2A.1"]),
        Category(
            name: "NSPrivacyAccessedAPICategorySystemBootTime", calls: [#"\bsystemUptime\b"#, #"\bmach_absolute_time\b"#],
            reasons: ["35F9.1", "8FFB.1", "3D61.1"]),
        Category(
            name: "NSPrivacyAccessedAPICategoryDiskSpace",
            calls: [
                #"\bvolumeAvailableCapacity\w*Key\b"#, #"\bvolumeTotalCapacityKey\b"#, #"\bsystemFreeSize\b"#,
                #"\bsystemSize\b"#, #"\bf?statv?fs\s*\("#,
            ],
            reasons: ["85F4.1", "E174.1", "7D9E.1", "B728.1"]),
        Category(name: "NSPrivacyAccessedAPICategoryActiveKeyboards", calls: [#"\bactiveInputModes\b"#], reasons: ["3EC4.1", "54BD.1"]),
    ]

    /// Targets no app ships: test doubles, the `spoor` command's library, benchmark workloads.
    static let notShipped: Set<String> = ["SpoorTesting", "SpoorTooling", "SpoorWorkload"]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The manifest as the built module ships it, parsed.
    static func manifest() throws -> [String: Any] {
        let url = try #require(PrivacyManifest.url, "PrivacyInfo.xcprivacy is not a resource of SpoorTracker")
        let data = try Data(contentsOf: url)
        #expect(data == (try Data(contentsOf: root.appendingPathComponent("Sources/SpoorTracker/PrivacyInfo.xcprivacy"))))
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    /// Each category's calls found in the shipped sources, as `file:line`.
    static func calls() throws -> [String: [String]] {
        let sources = root.appendingPathComponent("Sources")
        var found: [String: [String]] = [:]
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() where !notShipped.contains(target) {
            let directory = sources.appendingPathComponent(target)
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let file as String in files where [".swift", ".c", ".h"].contains(where: file.hasSuffix) {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.firstRange(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
                    for category in categories
                    where category.calls.contains(where: { code.range(of: $0, options: .regularExpression) != nil }) {
                        found[category.name, default: []].append("\(target)/\(file):\(number + 1)")
                    }
                }
            }
        }
        return found
    }

    @Test func everyRequiredReasonAPITheSourcesCallIsDeclaredAndNothingElse() throws {
        let declared = try #require(try Self.manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var reasons: [String: [String]] = [:]
        for entry in declared {
            let name = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            reasons[name] = try #require(entry["NSPrivacyAccessedAPITypeReasons"] as? [String])
        }
        let used = try Self.calls()
        for category in Self.categories {
            let calls = used[category.name] ?? []
            if calls.isEmpty {
                #expect(reasons[category.name] == nil, "\(category.name) is declared, and no shipped source calls it")
            } else {
                let given = try #require(reasons[category.name], "\(category.name) is not declared; called at \(calls.joined(separator: ", "))")
                #expect(!given.isEmpty && Set(given).isSubset(of: category.reasons), "\(category.name): reasons \(given)")
            }
        }
        #expect(Set(reasons.keys).isSubset(of: Set(Self.categories.map(\.name))), "unknown categories: \(reasons.keys.sorted())")
        // What the sources call today: stat, fstat and attributesOfItem for sizes of the log's own files.
        #expect(reasons["NSPrivacyAccessedAPICategoryFileTimestamp"] == ["C617.1"])
    }

    @Test func theScanFindsEachCategorysCalls() {
        // The patterns themselves: each matches a real call and not a look-alike.
        let cases: [(String, String?)] = [
            ("let defaults = UserDefaults.standard", "NSPrivacyAccessedAPICategoryUserDefaults"),
            ("\"_UIActivityUserDefaultsViewController\",", nil),
            ("guard fstat(fd, &info) == 0 else {", "NSPrivacyAccessedAPICategoryFileTimestamp"),
            ("var info = stat()", "NSPrivacyAccessedAPICategoryFileTimestamp"),
            ("let date = attributes[.modificationDate]", "NSPrivacyAccessedAPICategoryFileTimestamp"),
            ("let started = ProcessInfo.processInfo.systemUptime", "NSPrivacyAccessedAPICategorySystemBootTime"),
            ("let t = mach_absolute_time()", "NSPrivacyAccessedAPICategorySystemBootTime"),
            ("values.volumeAvailableCapacityForImportantUsageKey", "NSPrivacyAccessedAPICategoryDiskSpace"),
            ("statvfs(path, &fs)", "NSPrivacyAccessedAPICategoryDiskSpace"),
            ("let status = statusCode(of: reply)", nil),
            ("clock_gettime(CLOCK_MONOTONIC, &ts)", nil),
        ]
        for (line, expected) in cases {
            let matched = Self.categories.filter { $0.calls.contains { line.range(of: $0, options: .regularExpression) != nil } }
            #expect(matched.map(\.name) == (expected.map { [$0] } ?? []), "\(line)")
        }
    }

    @Test func collectedDataIsDeclaredForAnalyticsWithoutTracking() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        // The anonymous id of the install, the login id, what the user does (launches, pages, clicks, code
        // events) and crashes; every event carries the distinct id, so each is linked.
        let types = collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }
        #expect(Set(types) == [
            "NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypeUserID",
            "NSPrivacyCollectedDataTypeProductInteraction", "NSPrivacyCollectedDataTypeCrashData",
        ])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(entry["NSPrivacyCollectedDataTypePurposes"] as? [String] == ["NSPrivacyCollectedDataTypePurposeAnalytics"])
        }
    }
}
