public import Foundation
import SpoorSystem
public import SpoorModel
public import SpoorWire
import SpoorLog
import SpoorTracker

/// Why a simulation stopped: a malformed scenario line (or configuration, line 0).
public struct SimulationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The scenario line, counted from 1; 0 for the configuration.
    public var line: Int
    /// What is wrong with it.
    public var reason: String

    /// Creates an error for a scenario line (0 for the configuration).
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { line == 0 ? "config: \(reason)" : "line \(line): \(reason)" }
}

/// Replays an app's life through the real ``Tracker`` (`spoor simulate`; docs/command-line.md).
///
/// A scenario is one JSON object per line, `{"t": MS, "do": ACTION, …}`. Time is a scenario clock at
/// 2026-01-01T00:00:00Z + `t`. Each action takes full effect before the next: its events are in the log in
/// the storage directory. Events are handed to `emit` in delivery order, decoded back from the log's
/// protobuf records.
public final class LifecycleSimulator {
    /// 2026-01-01T00:00:00Z, the wall time at `t` = 0.
    public static let epoch: EpochMilliseconds = 1_767_225_600_000

    private let storageDirectory: URL
    private let clock = ScenarioClock(wall: LifecycleSimulator.epoch, monotonic: .seconds(1))
    private let autoTrack: AutoTrackOptions
    private let enableSession: Bool
    private let flushBulkSize: Int
    private let autoTrackIgnore: AutoTrackIgnoreList
    private var now: Int64 = 0
    private var process: SimulatedProcess?
    private var started = false
    private var delivered = 0
    /// The log of the process that went last and how many of its events were delivered: the next process adopts
    /// it, and the events a kill or crash left unsaid are appended to it then.
    private var ended: (directory: URL, delivered: Int)?
    /// Set by `crash`, `kill` and `exit`: the process goes once its events are delivered.
    private var processEnds = false
    private let decoder = EventDecoder()

    /// Creates a simulator over `storageDirectory` with the tracker configuration `configuration`
    /// (`autoTrack`: a list of docs/lifecycle.md names, default all; `enableSession`; `flushBulkSize`;
    /// `autoTrackIgnore`: `{"screenNames": [...], "elementTypes": [...], "elementIDs": [...]}`).
    public init(storageDirectory: URL, configuration: JSONValue? = nil) throws(SimulationError) {
        self.storageDirectory = storageDirectory
        var autoTrack = AutoTrackOptions.all
        var enableSession = false
        var flushBulkSize = 100
        var autoTrackIgnore = AutoTrackIgnoreList()
        if let configuration {
            guard case .object(let members) = configuration else {
                throw SimulationError(line: 0, reason: "expected a JSON object, got \(configuration.typeName)")
            }
            for member in members {
                switch (member.key, member.value) {
                case ("autoTrack", .array(let names)):
                    autoTrack = []
                    for name in names {
                        guard case .string(let name) = name, let kind = AutoTrackEventKind(rawValue: name) else {
                            let known = AutoTrackEventKind.allCases.map(\.rawValue).joined(separator: ", ")
                            throw SimulationError(line: 0, reason: "autoTrack: unknown name \(name.serialized) (known: \(known))")
                        }
                        autoTrack.insert(kind.option)
                    }
                case ("enableSession", .bool(let value)):
                    enableSession = value
                case ("flushBulkSize", .int(let value)):
                    flushBulkSize = Int(clamping: value)
                case ("autoTrackIgnore", .object(let lists)):
                    autoTrackIgnore = try Self.ignoreList(lists)
                case ("autoTrack", _), ("enableSession", _), ("flushBulkSize", _), ("autoTrackIgnore", _):
                    throw SimulationError(line: 0, reason: "\(member.key): unexpected \(member.value.typeName)")
                default:
                    break  // Other tracker settings are not simulated.
                }
            }
        }
        self.autoTrack = autoTrack
        self.enableSession = enableSession
        self.flushBulkSize = flushBulkSize
        self.autoTrackIgnore = autoTrackIgnore
        // Fail early on values the tracker would refuse.
        do {
            try makeConfiguration().validate()
        } catch {
            throw SimulationError(line: 0, reason: error.description)
        }
    }

    /// Runs the scenario `text`, handing every delivered event to `emit`. Stops at the first malformed line
    /// with a ``SimulationError``; the events before it have been emitted.
    public func run(_ text: String, emit: (Event) -> Void) throws(SimulationError) {
        defer { process?.stop() }
        var number = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                let action = try ScenarioAction(parsing: line, after: now)
                try perform(action)
            } catch {
                throw SimulationError(line: number, reason: error.reason)
            }
            deliver(emit)
            if processEnds {
                processEnds = false
                endProcess()
            }
        }
    }

    // MARK: - Actions

    private func perform(_ action: ScenarioAction) throws(ScenarioError) {
        if action.t > now {
            clock.advance(milliseconds: action.t - now)
            now = action.t
        }
        if !started, action.name != "startTracker" {
            try startProcess(appState: .notRunning)
        }
        started = true
        if action.name == "startTracker" {
            try startProcess(appState: try action.enumField("appState", default: ApplicationState.notRunning))
            return
        }
        guard let process else {
            throw ScenarioError("\(action.name): no process is running (startTracker first)")
        }
        let tracker = process.tracker
        switch action.name {
        case "launch":
            tracker.handle(.didFinishLaunching(try action.enumField("state", default: LaunchState.inactive)))
        case "willEnterForeground": tracker.handle(.willEnterForeground)
        case "didBecomeActive": tracker.handle(.didBecomeActive)
        case "willResignActive": tracker.handle(.willResignActive)
        case "didEnterBackground": tracker.handle(.didEnterBackground)
        case "willTerminate": tracker.handle(.willTerminate)
        case "pageAppear":
            let id = try action.string("page")
            tracker.pageAppear(id, page: PageInfo(
                screenName: try action.optionalString("screen_name") ?? id,
                title: try action.optionalString("title") ?? "",
                url: try action.optionalString("url") ?? "",
                ignoresAutoTrack: try action.optionalBool("ignores_auto_track") ?? false))
        case "pageDisappear":
            tracker.pageDisappear(try action.string("page"))
        case "click":
            tracker.trackClick(AppClick(
                elementType: try action.optionalString("element_type") ?? "",
                elementContent: try action.optionalString("element_content") ?? "",
                elementID: try action.optionalString("element_id") ?? "",
                elementPosition: try action.optionalString("element_position"),
                elementPath: try action.optionalString("element_path") ?? ""))
        case "track":
            tracker.track(try action.string("event"), properties: try action.properties("properties"))
        case "login": tracker.login(try action.string("id"))
        case "logout": tracker.logout()
        case "identify": tracker.identify(try action.string("id"))
        case "registerSuperProperties":
            tracker.registerSuperProperties(try action.properties("properties"))
        case "unregisterSuperProperty":
            tracker.unregisterSuperProperty(try action.string("key"))
        case "timerStart":
            let event = try action.string("event")
            process.timers[try action.optionalString("timer") ?? event] = tracker.timerStart(event)
        case "timerPause", "timerResume", "timerEnd":
            let label = try action.string("timer")
            guard let id = process.timers[label] else { throw ScenarioError("timer: no timer labelled \"\(label)\"") }
            switch action.name {
            case "timerPause": tracker.timerPause(id)
            case "timerResume": tracker.timerResume(id)
            default: tracker.timerEnd(id, properties: try action.properties("properties"))
            }
        case "optOut":
            let delete = try action.optionalBool("delete_stored_data") ?? false
            let done = Promise<Void>()
            Task {
                await tracker.optOut(deleteStoredData: delete)
                done.fulfil(())
            }
            _ = done.wait(timeout: .seconds(60))
            // Erased records are never delivered; the log starts over.
            if delete { delivered = 0 }
        case "optIn":
            tracker.optIn()
        case "crash":
            // The crash hook runs, then nothing: the process was alive up to now.
            tracker.noteAlive()
            tracker.recordCrash(reason: try action.optionalString("reason") ?? "crash")
            processEnds = true
            return
        case "kill":
            // kill -9 between two actions: nothing runs, but it was alive up to now.
            tracker.noteAlive()
            processEnds = true
            return
        case "exit":
            // As the Linux process source sees SIGTERM: the session ends, then the process.
            tracker.handle(.didEnterBackground)
            tracker.handle(.willTerminate)
            process.flush()
            processEnds = true
            return
        default:
            throw ScenarioError("do: unknown action \"\(action.name)\"")
        }
        tracker.noteAlive()
        process.flush()
    }

    private func makeConfiguration() -> Configuration {
        var configuration = Configuration(storageDirectory: storageDirectory)
        configuration.testSeams.clock = clock
        configuration.autoTrack.heartbeatInterval = nil
        configuration.autoTrack.events = autoTrack
        configuration.autoTrack.ignore = autoTrackIgnore
        configuration.tracking.enableSession = enableSession
        configuration.tracking.timeZone = TimeZone(identifier: "UTC") ?? configuration.tracking.timeZone
        configuration.upload.flushBulkSize = flushBulkSize
        configuration.storage.maxEvents = max(configuration.storage.maxEvents, flushBulkSize)
        return configuration
    }

    /// `autoTrackIgnore`'s members: lists of strings named as ``AutoTrackIgnoreList``'s properties.
    private static func ignoreList(_ members: [JSONValue.Member]) throws(SimulationError) -> AutoTrackIgnoreList {
        var list = AutoTrackIgnoreList()
        for member in members {
            guard case .array(let items) = member.value else {
                throw SimulationError(line: 0, reason: "autoTrackIgnore.\(member.key): expected array, got \(member.value.typeName)")
            }
            var names: Set<String> = []
            for item in items {
                guard case .string(let name) = item else {
                    throw SimulationError(line: 0, reason: "autoTrackIgnore.\(member.key): expected strings, got \(item.typeName)")
                }
                names.insert(name)
            }
            switch member.key {
            case "screenNames": list.screenNames = names
            case "elementTypes": list.elementTypes = names
            case "elementIDs": list.elementIDs = names
            default:
                throw SimulationError(
                    line: 0, reason: "autoTrackIgnore: unknown list \"\(member.key)\" (known: screenNames, elementTypes, elementIDs)")
            }
        }
        return list
    }

    private func startProcess(appState: ApplicationState) throws(ScenarioError) {
        endProcess()
        let tracker: Tracker
        do {
            tracker = try Tracker(configuration: makeConfiguration())
        } catch {
            throw ScenarioError("startTracker: \(error.description)")
        }
        let process = SimulatedProcess(tracker: tracker)
        self.process = process
        // Each process has a log of its own (the last one's records were delivered, then sealed when this one
        // adopted its log).
        delivered = 0
        for signal in LifecycleSignal.catchingUp(from: appState) { tracker.handle(signal) }
        tracker.noteAlive()
        process.flush()
    }

    /// The process goes away. Everything its actions produced is already in the log; closing the log
    /// here stands for the kernel closing the dead process's files.
    private func endProcess() {
        if let log = process?.tracker.pipeline.store.durableLog { ended = (log.directory, delivered) }
        process?.stop()
        process = nil
    }

    /// Hands the records the log gained since the last call to `emit`, decoded from their protobuf bytes.
    /// The running process's own log is read.
    private func deliver(_ emit: (Event) -> Void) {
        guard let log = process?.tracker.pipeline.store.durableLog else { return }
        if let ended {
            // Adopted by this process when it started: the last process's log, its records sealed, with what its
            // adopter recovered from its lifecycle files after them.
            self.ended = nil
            var events: [Event] = []
            if let snapshot = try? EventLog.snapshot(directory: ended.directory) {
                for batch in snapshot.batches { events += batch.frame.flatMap { try? decoder.decodeBatch($0.payload) } ?? [] }
                for record in snapshot.records { events += (try? decoder.decodeBatch(record.batch)) ?? [] }
            }
            for event in events.dropFirst(ended.delivered) { emit(event) }
        }
        var index = 0
        log.forEachRecord { entry in
            defer { index += 1 }
            guard index >= delivered, let events = try? decoder.decodeBatch(entry) else { return }
            for event in events { emit(event) }
        }
        delivered = max(delivered, index)
    }
}

/// One process of the simulation: its tracker and its timer labels.
private final class SimulatedProcess {
    let tracker: Tracker
    var timers: [String: TimerID] = [:]
    private var stopped = false

    init(tracker: Tracker) { self.tracker = tracker }

    func flush() {
        _ = tracker.flushAndWait(timeout: .seconds(30))
    }

    /// Stores what is pending and closes the log, waiting for it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        tracker.lifecycle.stopHeartbeat()
        _ = tracker.pipeline.requestFlush(stop: true).wait(timeout: .seconds(30))
    }
}
