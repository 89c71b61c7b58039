import Foundation
import SpoorWire
import SpoorModel
import Testing

/// Runs every scenario in Tests/Scenarios through `spoor simulate` and compares its events with the
/// scenario's `.expected.jsonl`, field by field (see Tests/Scenarios/README.md for the rules).
@Suite("spoor simulate scenarios")
struct SimulateScenarioTests {
    static let directory = SpoorProcess.root.appendingPathComponent("Tests/Scenarios")
    static let epoch: Int64 = 1_767_225_600_000
    /// Properties the lifecycle sets: an expected line that lists properties must list all of these the
    /// event carries.
    static let lifecycleKeys: Set<String> = [
        "$resume_from_background", "$is_first_time", "event_duration", "$app_end_reason", "$screen_name",
        "$title", "$url", "$referrer", "$referrer_title", "$element_type", "$element_content", "$element_id",
        "$element_position", "$element_path", "app_crashed_reason",
    ]

    static var scenarios: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") && !$0.hasSuffix(".expected.jsonl") }.sorted()
    }

    @Test func everyRuleHasAScenario() {
        let names = Self.scenarios.joined(separator: " ")
        for rule in ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "P1", "P2", "P3", "P4", "P5", "P6", "P7"] {
            #expect(names.contains("\(rule)_") || names.contains("_\(rule)_"), "no scenario for \(rule)")
        }
        #expect(names.contains("clicks"))
    }

    @Test(arguments: scenarios)
    func scenario(_ name: String) async throws {
        let base = String(name.dropLast(".jsonl".count))
        let expectedURL = Self.directory.appendingPathComponent(base + ".expected.jsonl")
        let expected = try String(contentsOf: expectedURL, encoding: .utf8)
            .split(separator: "\n").map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        var arguments = ["simulate", Self.directory.appendingPathComponent(name).path]
        let config = Self.directory.appendingPathComponent(base + ".config.json")
        if FileManager.default.fileExists(atPath: config.path) { arguments += ["--config", config.path] }
        let result = try await SpoorProcess.run(arguments)
        #expect(result.status == 0, "\(name): \(result.stderr)")
        let actual = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(actual.count == expected.count, "\(name): \(actual.count) events, expected \(expected.count):\n\(Self.summary(actual))")
        for (index, (want, got)) in zip(expected, actual).enumerated() {
            for problem in try Self.compare(expected: JSONValue.parse(want), actual: JSONValue.parse(got)) {
                Issue.record("\(name) event \(index + 1): \(problem)")
            }
        }
    }

    /// The `make demo` scenario runs clean and tells its story: the crash is recovered before the relaunch.
    @Test func demoScenario() async throws {
        let path = SpoorProcess.root.appendingPathComponent("Examples/Scenarios/demo.jsonl").path
        let result = try await SpoorProcess.run(["simulate", path])
        #expect(result.status == 0, "\(result.stderr)")
        let names = result.stdoutText.split(separator: "\n").compactMap { line -> String? in
            guard case .string(let name)? = try? JSONValue.parse(String(line))["event"] else { return nil }
            return name
        }
        let crash = try #require(names.firstIndex(of: "AppCrashed"))
        #expect(Array(names[crash...].prefix(4)) == ["AppCrashed", "$AppPageLeave", "$AppEnd", "$AppStart"])
        #expect(names.filter { $0 == "$AppStart" }.count == names.filter { $0 == "$AppEnd" }.count)
        let summary = try await SpoorProcess.run(["simulate", path, "--summary"])
        #expect(summary.stdoutText.contains(#"app_crashed_reason="SIGSEGV""#))
    }

    @Test func aMalformedLineStopsTheRunAfterTheEventsBeforeIt() async throws {
        let scenario = """
            {"t": 0, "do": "startTracker"}
            {"t": 0, "do": "launch", "state": "inactive"}
            {"t": 5, "do": "didBecomeActive"}
            # a comment, then a blank line

            {"t": 4, "do": "didEnterBackground"}
            {"t": 9, "do": "didEnterBackground"}
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-malformed-\(UUID().uuidString).jsonl")
        try scenario.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await SpoorProcess.run(["simulate", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("spoor simulate: line 6: t: 4 is before the previous line's 5"), "\(result.stderr)")
        #expect(result.stdoutText.split(separator: "\n").count == 1)
        #expect(result.stdoutText.contains(#""event":"$AppStart""#))
    }

    @Test("bad lines are named", arguments: [
        ("{not json", "line 1: invalid JSON"),
        (#"[1, 2]"#, "line 1: expected a JSON object, got array"),
        (#"{"do": "launch"}"#, "line 1: t: missing"),
        (#"{"t": 1.5, "do": "launch"}"#, "line 1: t: expected integer milliseconds, got number"),
        (#"{"t": 0, "do": "fly"}"#, #"line 1: do: unknown action "fly""#),
        (#"{"t": 0, "do": "launch", "state": "asleep"}"#, #"line 1: state: unknown value "asleep""#),
        (#"{"t": 0, "do": "pageAppear"}"#, "line 1: pageAppear: page: missing"),
        (#"{"t": 0, "do": "timerEnd", "timer": "x"}"#, #"line 1: timer: no timer labelled "x""#),
        (#"{"t": 0, "do": "track", "event": "E", "properties": {"k": null}}"#, "line 1: properties.k"),
    ])
    func badLine(line: String, message: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-bad-\(UUID().uuidString).jsonl")
        try line.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await SpoorProcess.run(["simulate", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("spoor simulate: " + message), "\(result.stderr)")
    }

    @Test func aBadConfigurationIsNamed() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-config-\(UUID().uuidString).json")
        try #"{"autoTrack": ["appStart", "appTeleport"]}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let scenario = Self.directory.appendingPathComponent("L1_cold_start.jsonl").path
        let result = try await SpoorProcess.run(["simulate", scenario, "--config", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix(#"spoor simulate: config: autoTrack: unknown name "appTeleport""#), "\(result.stderr)")
    }

    /// The differences between an expected line and an actual event. `t` is milliseconds since the
    /// scenario began; `properties`, when given, must match for every key listed, and list every
    /// lifecycle property the event has.
    static func compare(expected: JSONValue, actual: JSONValue) -> [String] {
        guard case .object(let members) = expected else { return ["expected line is not an object"] }
        var problems: [String] = []
        for member in members {
            switch member.key {
            case "t":
                guard case .int(let time)? = actual["time"], case .int(let t) = member.value else {
                    problems.append("time missing")
                    continue
                }
                if time - epoch != t { problems.append("t \(time - epoch), expected \(t)") }
            case "properties":
                guard case .object(let want) = member.value, case .object(let got)? = actual["properties"] else {
                    problems.append("properties missing")
                    continue
                }
                for property in want {
                    let value = got.first { $0.key == property.key }?.value
                    if value != property.value {
                        problems.append("\(property.key): \(value?.serialized ?? "absent"), expected \(property.value.serialized)")
                    }
                }
                for property in got where lifecycleKeys.contains(property.key) && !want.contains(where: { $0.key == property.key }) {
                    problems.append("unexpected \(property.key): \(property.value.serialized)")
                }
            default:
                if actual[member.key] != member.value {
                    problems.append("\(member.key): \(actual[member.key]?.serialized ?? "absent"), expected \(member.value.serialized)")
                }
            }
        }
        return problems
    }

    static func summary(_ lines: [String]) -> String {
        lines.map { line in
            guard let json = try? JSONValue.parse(line), case .string(let event)? = json["event"],
                  case .int(let time)? = json["time"] else { return line }
            return "  \(event) t=\(time - epoch)"
        }.joined(separator: "\n")
    }
}
