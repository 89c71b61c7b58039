import Foundation
import SpoorCore
import SpoorTracker

/// `spoor simulate SCENARIO.jsonl [--storage DIR] [--config CONFIG.json]`: replays an app's life through
/// the real tracker and prints the events it delivers, one JSON object per line (simulate spec).
enum SimulateCommand {
    static let usage = "usage: spoor simulate SCENARIO.jsonl [--storage DIR] [--config CONFIG.json] [--summary]"

    /// Properties every event carries (preset by the tracker), left out of `--summary` lines.
    static let presetKeys: Set<String> = [
        "$app_version", "$device_id", "$is_first_day", "$lib", "$lib_version", "$manufacturer", "$model", "$os",
        "$os_version", "$timezone_offset",
    ]

    static func run(_ args: [String]) -> Int32 {
        var scenarioPath: String?
        var storagePath: String?
        var configPath: String?
        var summary = false
        var index = 0
        while index < args.count {
            let argument = args[index]
            switch argument {
            case "--storage", "--config":
                guard index + 1 < args.count else { return CLI.fail("spoor simulate: \(argument) needs a value\n\(usage)", status: 64) }
                if argument == "--storage" { storagePath = args[index + 1] } else { configPath = args[index + 1] }
                index += 2
            case "--summary":
                summary = true
                index += 1
            case "-h", "--help":
                print(usage)
                return 0
            default:
                guard scenarioPath == nil, !argument.hasPrefix("--") else {
                    return CLI.fail("spoor simulate: unexpected argument '\(argument)'\n\(usage)", status: 64)
                }
                scenarioPath = argument
                index += 1
            }
        }
        guard let scenarioPath else { return CLI.fail(usage, status: 64) }
        guard let scenario = read(scenarioPath) else {
            return CLI.fail("spoor simulate: cannot read \(scenarioPath)", status: 66)
        }

        var configuration: JSONValue?
        if let configPath {
            guard let text = read(configPath) else { return CLI.fail("spoor simulate: cannot read \(configPath)", status: 66) }
            do {
                configuration = try JSONValue.parse(text)
            } catch {
                return CLI.fail("config: invalid JSON: \(error.description)", status: 2)
            }
        }

        let storage: URL
        var temporary: URL?
        if let storagePath {
            storage = URL(fileURLWithPath: storagePath, isDirectory: true)
        } else {
            storage = FileManager.default.temporaryDirectory
                .appendingPathComponent("spoor-simulate-\(UUID().uuidString)", isDirectory: true)
            temporary = storage
        }
        defer { if let temporary { try? FileManager.default.removeItem(at: temporary) } }

        do {
            let simulator = try LifecycleSimulator(storageDirectory: storage, configuration: configuration)
            try simulator.run(scenario) { event in
                let line = summary ? summaryLine(event) : EventJSON.encode(event)
                CLI.output(Array((line + "\n").utf8))
            }
        } catch {
            return CLI.fail(error.description, status: 2)
        }
        return 0
    }

    /// `--summary`: one short line per event for people: time since the scenario began, the event, the
    /// user when logged in, and the properties other than the preset ones.
    static func summaryLine(_ event: Event) -> String {
        let milliseconds = event.time - LifecycleSimulator.epoch
        let seconds = String(format: "%10.3fs", Double(milliseconds) / 1000)
        var line = "\(seconds)  \(event.name.padding(toLength: 18, withPad: " ", startingAt: 0))"
        if let login = event.loginID { line += " [\(login)]" }
        for (key, value) in event.properties.sorted(by: { $0.key < $1.key }) where !presetKeys.contains(key) {
            line += " \(key)=\(EventJSON.json(value).serialized)"
        }
        return line
    }

    private static func read(_ path: String) -> String? {
        if path == "-" { return String(decoding: CLI.readStandardInput(), as: UTF8.self) }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
