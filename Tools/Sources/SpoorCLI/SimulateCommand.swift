import ArgumentParser
import Foundation
import SpoorTooling
import SpoorWire
import SpoorModel
import SpoorTracker

/// `spoor simulate SCENARIO.jsonl [--storage DIR] [--config CONFIG.json]`: replays an app's life through
/// the real tracker and prints the events it delivers, one JSON object per line (docs/command-line.md, "Scenarios for `spoor simulate`").
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Replay an app's life through the real tracker and print its events.",
        discussion: "Example: spoor simulate Tests/Scenarios/L1_cold_start.jsonl --summary"
    )

    /// Properties every event carries (preset by the tracker), left out of `--summary` lines.
    static let presetKeys: Set<String> = [
        "$app_version", "$device_id", "$is_first_day", "$lib", "$lib_version", "$manufacturer", "$model", "$os",
        "$os_version", "$timezone_offset",
    ]

    @Argument(
        help: ArgumentHelp("The scenario: one JSON object per line ('-' reads standard input).", valueName: "scenario.jsonl"),
        completion: .file(extensions: ["jsonl"]))
    var scenarioPath: String

    @Option(
        name: .customLong("storage"),
        help: ArgumentHelp("The storage directory (a fresh temporary one when not given).", valueName: "dir"),
        completion: .directory)
    var storagePath: String?

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp("The tracker configuration as JSON.", valueName: "config.json"),
        completion: .file(extensions: ["json"]))
    var configPath: String?

    @Flag(help: "One short line per event for people instead of JSON.")
    var summary = false

    func run() throws {
        guard let scenario = Self.read(scenarioPath) else {
            throw CLI.failure("spoor simulate: cannot read \(scenarioPath)", status: CLI.cannotRead)
        }

        var configuration: JSONValue?
        if let configPath {
            guard let text = Self.read(configPath) else { throw CLI.failure("spoor simulate: cannot read \(configPath)", status: CLI.cannotRead) }
            do {
                configuration = try JSONValue.parse(text)
            } catch {
                throw CLI.failure("spoor simulate: config: invalid JSON: \(error)")
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
                let line = summary ? Self.summaryLine(event) : EventJSON.encode(event)
                CLI.output(Array((line + "\n").utf8))
            }
        } catch {
            throw CLI.failure("spoor simulate: \(error)")
        }
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
