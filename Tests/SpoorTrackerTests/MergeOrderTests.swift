import Foundation
import SpoorModel
import SpoorSystem
import Testing

import SpoorTracker
import SpoorTestSupport

@Suite struct MergeOrderTests {
    @Test func presetPropertiesAreOnEveryEvent() async throws {
        let harness = try Harness()
        harness.tracker.track("E")
        let event = try #require(await harness.flushedEvents(named: "E").first)
        for (key, value) in testPresets { #expect(event.properties[key] == value) }
        #expect(event.properties["$app_version"] == "9.9")
        // Written out, not read from the code under test: the platform these tests run on and the release.
        #if os(Linux)
        let platform = "Linux"
        #elseif os(macOS)
        let platform = "macOS"
        #else
        let platform = "iOS"
        #endif
        #expect(event.properties["$lib"] == .string(platform))
        #expect(event.properties["$lib_version"] == "0.1.0")
        #expect(event.properties["$timezone_offset"] == 0)  // UTC
        // The device id is the one the tracker keeps in its state file.
        let state = try JSONSerialization.jsonObject(with: Data(contentsOf: harness.directory.file("state.json"))) as? [String: Any]
        let device = try #require(state?["deviceID"] as? String)
        #expect(UUID(uuidString: device) != nil, "\(device)")
        #expect(event.properties["$device_id"] == .string(device))
        #expect(event.lib == LibInfo(lib: platform, libVersion: "0.1.0", method: .code, appVersion: "9.9"))
    }

    @Test func timezoneOffsetUsesJavaScriptsSign() async throws {
        let harness = try Harness { $0.tracking.timeZone = TimeZone(secondsFromGMT: 8 * 3600)! }
        harness.tracker.track("E")
        let event = try #require(await harness.flushedEvents(named: "E").first)
        #expect(event.properties["$timezone_offset"] == -480)
    }

    @Test func laterSourcesWinInTheSpecOrder() async throws {
        let harness = try Harness()
        // Each key is set by every source from the lowest up to some level; the highest source must win.
        harness.tracker.registerSuperProperties([
            "$os": "super", "a": "super", "b": "super", "c": "super", "$is_first_day": false,
        ])
        harness.tracker.registerDynamicSuperProperties { ["b": "dynamic", "c": "dynamic", "$is_first_day": false] }
        harness.tracker.track("E", properties: ["c": "call", "$is_first_day": false])
        let event = try #require(await harness.flushedEvents(named: "E").first)
        #expect(event.properties["$os"] == "super")  // 2 over 1
        #expect(event.properties["a"] == "super")
        #expect(event.properties["b"] == "dynamic")  // dynamic over super
        #expect(event.properties["c"] == "call")  // 3 over 2
        #expect(event.properties["$is_first_day"] == true)  // 4 over 3
        #expect(event.properties["$model"] == "TestModel")  // untouched preset
    }

    @Test func deviceIDAndSessionIDCannotBeOverridden() async throws {
        let harness = try Harness { $0.tracking.enableSession = true }
        harness.tracker.registerSuperProperties(["$device_id": "super-device"])
        harness.tracker.registerDynamicSuperProperties { ["$event_session_id": "dynamic-session"] }
        harness.tracker.track("E", properties: ["$device_id": "call-device", "$event_session_id": "call-session"])
        harness.tracker.track("F")
        let events = await harness.flushedEvents()
        let e = try #require(events.first { $0.name == "E" })
        let f = try #require(events.first { $0.name == "F" })
        #expect(e.properties["$device_id"] == f.properties["$device_id"])
        #expect(e.properties["$device_id"] != "call-device")
        #expect(e.properties["$device_id"] != "super-device")
        #expect(e.properties["$event_session_id"] == nil)
        #expect(e.sessionID != nil)
        #expect(e.sessionID == f.sessionID)
    }

    @Test func dynamicSuperPropertiesAreEvaluatedWhenTrackIsCalled() async throws {
        let harness = try Harness()
        let clock = harness.clock
        harness.tracker.registerDynamicSuperProperties { ["at": .date(clock.wallMilliseconds())] }
        harness.tracker.track("One")
        clock.advance(by: .seconds(5))
        harness.tracker.track("Two")
        harness.tracker.registerDynamicSuperProperties(nil)
        harness.tracker.track("Three")
        let events = await harness.flushedEvents()
        #expect(events.map { $0.properties["at"] } == [.date(testEpoch), .date(testEpoch + 5000), nil])
    }

    /// The provider is called the same way on the 2,000th event as on the first: reading it back must not wrap it
    /// in another layer each time (a closure read out of a generic container through `inout` was, once, so every
    /// `track` took longer than the one before).
    @Test func dynamicSuperPropertiesCostTheSameOnEveryCall() async throws {
        let harness = try Harness()
        let depths = Locked<[Int]>([])
        harness.tracker.registerDynamicSuperProperties {
            depths.withLock { $0.append(Thread.callStackReturnAddresses.count) }
            return [:]
        }
        for _ in 0..<2_000 { harness.tracker.track("E") }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 2_000)
        #expect(seen.first == seen.last, "the stack under track() grew from \(seen.first ?? 0) to \(seen.last ?? 0) frames")
    }

    @Test func superPropertiesCanBeRemoved() async throws {
        let harness = try Harness()
        harness.tracker.registerSuperProperties(["a": 1, "b": 2])
        harness.tracker.unregisterSuperProperty("a")
        harness.tracker.track("One")
        harness.tracker.clearSuperProperties()
        harness.tracker.track("Two")
        let events = await harness.flushedEvents()
        #expect(events[0].properties["a"] == nil)
        #expect(events[0].properties["b"] == 2)
        #expect(events[1].properties["b"] == nil)
    }

    @Test func isFirstDayIsTrueOnlyOnTheFirstCalendarDay() async throws {
        // 2023-11-14T22:13:20Z; the day ends 1 h 46 min 40 s later.
        let harness = try Harness()
        harness.tracker.track("Day1")
        harness.clock.advance(by: .seconds(6399))
        harness.tracker.track("Day1Late")
        harness.clock.advance(by: .seconds(2))
        harness.tracker.track("Day2")
        let events = await harness.flushedEvents()
        #expect(events.map { $0.properties["$is_first_day"] } == [true, true, false])
        // The first day is remembered across restarts.
        await harness.tracker.shutdown(timeout: testBound)
        let later = try harness.restarted()
        later.tracker.track("AfterRestart")
        #expect(await later.flushedEvents(named: "AfterRestart").first?.properties["$is_first_day"] == false)
    }

    @Test func firstDayFollowsTheConfiguredTimeZone() async throws {
        // 22:13 UTC is already the next day at UTC+8, and that next day is the first one.
        let harness = try Harness { $0.tracking.timeZone = TimeZone(secondsFromGMT: 8 * 3600)! }
        harness.clock.advance(by: .seconds(3600 * 25))
        harness.tracker.track("Later")
        #expect(await harness.flushedEvents(named: "Later").first?.properties["$is_first_day"] == false)
    }
}

@Suite struct PresetPropertyTests {
    @Test func linuxPresetsComeFromOSReleaseAndDMI() throws {
        let root = TemporaryDirectory()
        let fm = FileManager.default
        try fm.createDirectory(at: root.url.appendingPathComponent("etc"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.url.appendingPathComponent("sys/class/dmi/id"), withIntermediateDirectories: true)
        try Data("NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n# comment\nID=debian\n".utf8)
            .write(to: root.url.appendingPathComponent("etc/os-release"))
        try Data("ThinkPad X1\n".utf8).write(to: root.url.appendingPathComponent("sys/class/dmi/id/product_name"))
        try Data("LENOVO\n".utf8).write(to: root.url.appendingPathComponent("sys/class/dmi/id/sys_vendor"))
        let presets = PresetProperties.read(
            appVersion: "3.1", deviceID: "device", timeZone: TimeZone(secondsFromGMT: -5 * 3600)!, now: testEpoch,
            root: root.url.path)
        #expect(presets["$os"] == "Debian GNU/Linux")
        #expect(presets["$os_version"] == "12")
        #expect(presets["$model"] == "ThinkPad X1")
        #expect(presets["$manufacturer"] == "LENOVO")
        #expect(presets["$app_version"] == "3.1")
        #expect(presets["$timezone_offset"] == 300)
        #expect(presets["$device_id"] == "device")
    }

    @Test func unreadableSourcesGiveUnknown() {
        let root = TemporaryDirectory()
        let presets = PresetProperties.read(
            appVersion: "", deviceID: "d", timeZone: TimeZone(identifier: "UTC")!, now: testEpoch, root: root.url.path)
        #expect(presets["$model"] == "unknown")
        #expect(presets["$manufacturer"] == "unknown")
        // Without os-release the kernel's name and release from uname stand in.
        guard case .string(let os) = presets["$os"], case .string(let version) = presets["$os_version"] else {
            Issue.record("no $os")
            return
        }
        #expect(!os.isEmpty && !version.isEmpty)
    }
}
