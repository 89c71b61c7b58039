import Foundation
import SpoorModel
import SpoorLog
import SpoorTesting
import Testing
import SpoorTracker
import SpoorTestSupport

@Suite("Crash and kill recovery (L10, P7)")
struct LifecycleRecoveryTests {
    @Test("L10/P7 killed while started: the next launch emits the page leaves and $AppEnd, timed to last alive, before its $AppStart")
    func killRecovery() async throws {
        let directory = makeTemporaryDirectory()
        let clock = ManualClock.lifecycleTest()
        let first = try await LifecycleHarness(directory: directory, clock: clock)
        await first.coldStart()
        first.advance(1_000)
        await first.appear("home")
        clock.advance(by: .milliseconds(4_000))
        await first.heartbeat()  // the last moment the process is known alive
        let lastAlive = clock.wallMilliseconds()
        clock.advance(by: .milliseconds(90_000))  // killed some time later, then relaunched
        // kill -9: nothing more from the first process.

        let second = try await LifecycleHarness(directory: directory, clock: clock, isFirstLaunch: false)
        await second.coldStart()
        #expect(await second.names == ["$AppPageLeave", "$AppEnd", "$AppStart"])
        #expect(await second.events[0].duration == 4.0)
        #expect(await second.events[0].time == lastAlive)
        #expect(await second.events[1].duration == 5.0)
        #expect(await second.events[1].time == lastAlive)
        #expect(await second.events[1].properties["$app_end_reason"] == "recovered")
        #expect(await second.events[2].properties["$is_first_time"] == false)

        // The first process is recovered once only; the third launch recovers just the second's session.
        let third = try await LifecycleHarness(directory: directory, clock: clock, isFirstLaunch: false)
        #expect(await third.names == ["$AppEnd"])
        #expect(await third.events[0].duration == 0)
    }

    @Test("L10 crash: AppCrashed first, then leaves and $AppEnd timed to the crash")
    func crashRecovery() async throws {
        let directory = makeTemporaryDirectory()
        let clock = ManualClock.lifecycleTest()
        let first = try await LifecycleHarness(directory: directory, clock: clock)
        await first.coldStart()
        await first.appear("player")
        clock.advance(by: .milliseconds(2_000))
        await first.heartbeat()
        clock.advance(by: .milliseconds(1_500))
        await first.crash(reason: "SIGSEGV")
        let crashTime = clock.wallMilliseconds()
        clock.advance(by: .milliseconds(10_000))

        let second = try await LifecycleHarness(directory: directory, clock: clock, isFirstLaunch: false)
        await second.coldStart()
        #expect(await second.names == ["AppCrashed", "$AppPageLeave", "$AppEnd", "$AppStart"])
        #expect(await second.events[0].properties == ["app_crashed_reason": "SIGSEGV"])
        #expect(await second.events.prefix(3).allSatisfy { $0.time == crashTime })
        #expect(await second.events[1].duration == 3.5)
        #expect(await second.events[2].duration == 3.5)
    }

    @Test("A crash while in the background: AppCrashed only, no $AppEnd")
    func crashInBackground() async throws {
        let directory = makeTemporaryDirectory()
        let clock = ManualClock.lifecycleTest()
        let first = try await LifecycleHarness(directory: directory, clock: clock)
        await first.coldStart()
        await first.goHome()
        await first.crash(reason: "boom")
        let second = try await LifecycleHarness(directory: directory, clock: clock, isFirstLaunch: false)
        #expect(await second.names == ["AppCrashed"])
    }

    @Test("A clean end leaves nothing to recover")
    func cleanEnd() async throws {
        let directory = makeTemporaryDirectory()
        let first = try await LifecycleHarness(directory: directory)
        await first.coldStart()
        await first.appear("home")
        await first.send(.willTerminate)
        let second = try await LifecycleHarness(directory: directory, isFirstLaunch: false)
        #expect(await second.names.isEmpty)
    }

    @Test("A passive start that dies has no session to recover")
    func passiveDies() async throws {
        let directory = makeTemporaryDirectory()
        let first = try await LifecycleHarness(directory: directory)
        await first.send(.didFinishLaunching(.background))
        await first.appear("home")
        let second = try await LifecycleHarness(directory: directory, isFirstLaunch: false)
        #expect(await second.names.isEmpty)
    }

    @Test("A corrupt checkpoint is reported and ignored; the next save replaces it", arguments: [
        Data("{not json".utf8), Data([0, 1, 2, 255]), Data(#"{"version": 99}"#.utf8), Data(),
    ])
    func corruptCheckpoint(contents: Data) async throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent(StorageLayout.lifecycleCheckpointName)
        try contents.write(to: url)
        let harness = try await LifecycleHarness(directory: directory)
        #expect(harness.controller.checkpointErrorCount == 1)
        #expect(await harness.names.isEmpty)
        await harness.coldStart()
        #expect(await harness.names == ["$AppStart"])
        guard case .success(let checkpoint?) = LifecycleCheckpointStore(directory: directory).load() else {
            Issue.record("checkpoint not replaced")
            return
        }
        #expect(checkpoint.state == .started)
    }

    @Test("The checkpoint follows every lifecycle and page change")
    func checkpointContents() async throws {
        let harness = try await LifecycleHarness()
        let store = LifecycleCheckpointStore(directory: harness.directory)
        await harness.coldStart()
        await harness.appear("home")
        harness.advance(250)
        await harness.appear("detail")
        var checkpoint = try #require(try store.load().get())
        #expect(checkpoint.state == .started)
        #expect(checkpoint.sessionStart != nil)
        #expect(checkpoint.pages.map(\.id) == ["home", "detail"])
        #expect(checkpoint.lastAlive == harness.clock.instant)
        await harness.goHome()
        checkpoint = try #require(try store.load().get())
        #expect(checkpoint.state == .ended)
        #expect(checkpoint.sessionStart == nil)
        #expect(checkpoint.pages.isEmpty)
    }

    @Test("Crash marker records round-trip; long or odd reasons are cut, not corrupting")
    func crashMarker() async throws {
        let directory = makeTemporaryDirectory()
        let marker = try #require(CrashMarker(directory: directory))
        #expect(CrashMarker.readPrevious(in: directory) == nil)
        marker.record(reason: "fatal\nerror", time: 1_767_225_600_123)
        #expect(CrashMarker.readPrevious(in: directory) == CrashRecord(time: 1_767_225_600_123, reason: "fatal error"))
        marker.record(reason: String(repeating: "x", count: 2_000), time: 7)
        let record = try #require(CrashMarker.readPrevious(in: directory))
        #expect(record.time == 7)
        #expect(record.reason.count < CrashMarker.bufferSize)
        // A new process's marker starts empty.
        _ = CrashMarker(directory: directory)
        #expect(CrashMarker.readPrevious(in: directory) == nil)
    }
}
