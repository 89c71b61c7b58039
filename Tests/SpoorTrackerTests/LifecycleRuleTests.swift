import Foundation
import SpoorModel
import Testing
import SpoorTracker

@Suite("Lifecycle rules L1–L11")
struct LifecycleRuleTests {
    @Test("L1 cold start: one $AppStart, not resumed, first time on the first launch only")
    func coldStart() async throws {
        let first = try await LifecycleHarness(isFirstLaunch: true)
        await first.coldStart()
        #expect(await first.names == ["$AppStart"])
        #expect(await first.events[0].properties["$resume_from_background"] == false)
        #expect(await first.events[0].properties["$is_first_time"] == true)

        let later = try await LifecycleHarness(isFirstLaunch: false)
        await later.coldStart()
        #expect(await later.events.map(\.properties["$is_first_time"]) == [false])
    }

    @Test("L2 late initialisation while active: exactly one $AppStart even if launch signals follow")
    func lateInitialisation() async throws {
        let harness = try await LifecycleHarness()
        await harness.send(LifecycleSignal.catchingUp(from: .active)[0])
        await harness.coldStart()
        await harness.send(.didBecomeActive)
        #expect(await harness.names == ["$AppStart"])
        #expect(await harness.events[0].properties["$resume_from_background"] == false)
        #expect(await harness.events[0].properties["$is_first_time"] == true)
        #expect(LifecycleSignal.catchingUp(from: .notRunning).isEmpty)
        #expect(LifecycleSignal.catchingUp(from: .inactive).isEmpty)
        #expect(LifecycleSignal.catchingUp(from: .background) == [.didFinishLaunching(.background)])
    }

    @Test("L3 passive start: $AppStartPassively, no $AppStart")
    func passiveStart() async throws {
        let harness = try await LifecycleHarness()
        await harness.send(.didFinishLaunching(.background))
        #expect(await harness.names == ["$AppStartPassively"])
        #expect(await harness.events[0].properties["$is_first_time"] == true)
        #expect(await harness.events[0].properties["$resume_from_background"] == false)
    }

    @Test("L4 the user opens a passively started app: $AppStart resumed from background")
    func openAfterPassiveStart() async throws {
        let harness = try await LifecycleHarness()
        await harness.send(.didFinishLaunching(.background))
        harness.advance(30_000)
        await harness.hotStart()
        #expect(await harness.names == ["$AppStartPassively", "$AppStart"])
        #expect(await harness.events[1].properties["$resume_from_background"] == true)
        #expect(await harness.events[1].properties["$is_first_time"] == false)
    }

    @Test("L5 hot start: resumed, not first time")
    func hotStart() async throws {
        let harness = try await LifecycleHarness(isFirstLaunch: true)
        await harness.coldStart()
        await harness.goHome()
        harness.advance(60_000)
        await harness.hotStart()
        #expect(await harness.names == ["$AppStart", "$AppEnd", "$AppStart"])
        #expect(await harness.events[2].properties["$resume_from_background"] == true)
        #expect(await harness.events[2].properties["$is_first_time"] == false)
    }

    @Test("L6 going home: $AppEnd with the session's duration to the millisecond")
    func goHome() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        harness.advance(12_345)
        await harness.send(.willResignActive)
        harness.advance(7)
        await harness.send(.didEnterBackground)
        #expect(await harness.names == ["$AppStart", "$AppEnd"])
        #expect(await harness.events[1].duration == 12.352)
    }

    @Test("L7 lock screen: two didEnterBackground give one $AppEnd")
    func lockScreen() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        harness.advance(1000)
        await harness.send(.willResignActive, .didEnterBackground, .didEnterBackground)
        #expect(await harness.names == ["$AppStart", "$AppEnd"])
    }

    @Test("L8 notification centre, app switcher and back, declined call: nothing")
    func resignAndBack() async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        for _ in 0..<3 {
            harness.advance(500)
            await harness.send(.willResignActive, .didBecomeActive)
        }
        #expect(await harness.names == ["$AppStart"])
    }

    @Test("L9 terminate from the foreground: $AppEnd, then a durable sync before returning")
    func terminateFromForeground() async throws {
        let harness = try await LifecycleHarness(.controller)
        await harness.coldStart()
        harness.advance(2_500)
        await harness.send(.willTerminate)
        #expect(await harness.names == ["$AppStart", "$AppEnd"])
        #expect(await harness.events[1].duration == 2.5)
        let calls = harness.calls
        #expect(Array(calls.suffix(4)) == ["$AppEnd", "pause", "flush", "sync"])
        // Terminated is final.
        await harness.send(.didBecomeActive, .didEnterBackground)
        #expect(await harness.names.count == 2)
    }

    @Test("L9 terminate after going home: no second $AppEnd, still a durable sync")
    func terminateFromBackground() async throws {
        let harness = try await LifecycleHarness(.controller)
        await harness.coldStart()
        await harness.goHome()
        await harness.send(.willTerminate)
        #expect(await harness.names == ["$AppStart", "$AppEnd"])
        #expect(harness.calls.last == "sync")
    }

    @Test("L11 a duration of 24 h or more is reported as 0", arguments: [
        (Int64(86_399_999), 86_399.999), (Int64(86_400_000), 0.0), (Int64(200_000_000), 0.0),
    ])
    func dayLongDuration(milliseconds: Int64, expected: Double) async throws {
        let harness = try await LifecycleHarness()
        await harness.coldStart()
        harness.advance(milliseconds)
        await harness.goHome()
        #expect(await harness.events.last?.duration == expected)
    }

    @Test("Every start resumes timers and flushes; every end pauses timers and flushes; the upload interval follows")
    func timersAndFlush() async throws {
        let harness = try await LifecycleHarness(.controller)
        await harness.coldStart()
        #expect(harness.calls == ["$AppStart", "resume", "flush"])
        await harness.goHome()
        #expect(Array(harness.calls.suffix(3)) == ["$AppEnd", "pause", "flush"])
        await harness.hotStart()
        #expect(harness.sink?.startedChanges == [true, false, true])
    }

    @Test("State machine: a transition to the current state does nothing")
    func selfTransitions() async {
        var machine = LifecycleStateMachine()
        #expect(machine.handle(.didFinishLaunching(.inactive)) == nil)
        #expect(machine.handle(.didBecomeActive) == LifecycleTransition(from: .initial, to: .started))
        #expect(machine.handle(.didBecomeActive) == nil)
        #expect(machine.handle(.didFinishLaunching(.background)) == nil)
        #expect(machine.handle(.didEnterBackground) == LifecycleTransition(from: .started, to: .ended))
        #expect(machine.handle(.didEnterBackground) == nil)
        #expect(machine.handle(.willTerminate) == LifecycleTransition(from: .ended, to: .terminated))
        #expect(machine.handle(.didBecomeActive) == nil)
        #expect(machine.state == .terminated)
    }

    @Test("autoTrack: a type left out is not emitted, but its timing keeps running (docs/lifecycle.md, which events are emitted)")
    func autoTrackFilter() async throws {
        let harness = try await LifecycleHarness(enabled: [.appEnd, .appPageLeave])
        await harness.coldStart()
        await harness.appear("home")
        harness.advance(4_000)
        await harness.goHome()
        #expect(await harness.names == ["$AppPageLeave", "$AppEnd"])
        #expect(await harness.events.map(\.duration) == [4.0, 4.0])
    }
}
