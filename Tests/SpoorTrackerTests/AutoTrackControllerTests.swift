import Foundation
import SpoorModel
import SpoorTesting
import SpoorTestSupport
import SpoorSystem
import Testing

import SpoorTracker

/// A sink that calls back into the lifecycle while the controller delivers an event to it, as app code run by
/// `track` can (a dynamic super property provider, an `onRejection` callback): the first `$AppStart` makes
/// page "Home" appear.
private final class ReenteringSink: AutoTrackSink, @unchecked Sendable {
    // @unchecked: `controller` is set once, before any signal; `recording` is thread-safe.
    let recording: RecordingSink
    weak var controller: AutoTrackController?

    init(clock: ManualClock) { recording = RecordingSink(clock: clock) }

    func trackAutomatic(_ name: String, properties: Properties, at time: EpochMilliseconds?) -> Bool {
        let recorded = recording.trackAutomatic(name, properties: properties, at: time)
        if name == "$AppStart" { controller?.pageAppear(id: "Home", info: PageInfo(screenName: "Home")) }
        return recorded
    }
    func pauseAllTimers(at now: UInt64?) { recording.pauseAllTimers(at: now) }
    func resumeAllTimers(at now: UInt64?) { recording.resumeAllTimers(at: now) }
    func requestFlush() { recording.requestFlush() }
    func appStartedChanged(_ started: Bool) { recording.appStartedChanged(started) }
    func flushAndWait(timeout: Duration) -> Bool { recording.flushAndWait(timeout: timeout) }
}

@Suite("AutoTrackController: deciding under the lock, delivering after it")
struct AutoTrackControllerTests {
    /// A lifecycle call made from inside the delivery of another (on the same thread) must not wait for the
    /// delivery it is part of: it is decided at once and delivered right after the events decided before it.
    @Test func aSinkReenteringTheLifecycleDoesNotDeadlock() async throws {
        let clock = ManualClock.lifecycleTest()
        let sink = ReenteringSink(clock: clock)
        let controller = AutoTrackController(
            options: LifecycleOptions(storageDirectory: makeTemporaryDirectory(), heartbeatInterval: nil),
            now: { [clock] in clock.instant })
        sink.controller = controller
        controller.connect(sink, isFirstLaunch: true)
        // On a thread of its own: a deadlock holds that thread, never one the other tests need; the bound turns
        // it into a failure.
        let returned = await finished {
            await onThreadOfItsOwn {
                controller.handle(.didFinishLaunching(.inactive))
                controller.handle(.didBecomeActive)
                return true
            }
        }
        #expect(returned == true, "handle(_:) did not return: the re-entered pageAppear waited for its own caller")
        #expect(sink.recording.events.map(\.name) == ["$AppStart", "$AppViewScreen"])
        #expect(controller.lifecycleState == .started)
    }

    /// The same through a real tracker: a dynamic super property provider (app code, run by `track` on the
    /// caller's thread) that makes a page appear while `$AppStart` is being tracked.
    @Test func aProviderReenteringTheLifecycleDoesNotDeadlock() async throws {
        let h = try Harness { $0.autoTrack.events = .all }
        let reentered = Locked(false)
        h.tracker.registerDynamicSuperProperties { [weak tracker = h.tracker] in
            let first = reentered.withLock { done in
                defer { done = true }
                return !done
            }
            if first { tracker?.pageAppear("Home", page: PageInfo(screenName: "Home")) }
            return [:]
        }
        let tracker = h.tracker
        let returned = await finished {
            await onThreadOfItsOwn {
                tracker.handle(.didFinishLaunching(.inactive))
                tracker.handle(.didBecomeActive)
                return true
            }
        }
        #expect(returned == true, "handle(_:) did not return: the provider's pageAppear waited for its own caller")
        #expect(await h.flushedEvents().map(\.name) == ["$AppStart", "$AppViewScreen"])
    }

    /// `willTerminate` sent while another thread is delivering (held here inside the sink) still returns only once
    /// its events are durable: the app gets no later chance.
    @Test func willTerminateWaitsForADeliveryOnAnotherThread() async throws {
        let clock = ManualClock.lifecycleTest()
        let sink = GatedSink(clock: clock)
        let nowCalls = Locked(0)
        let watchers = ConditionWatchers()
        let controller = AutoTrackController(
            options: LifecycleOptions(storageDirectory: makeTemporaryDirectory(), heartbeatInterval: nil),
            now: { [clock] in
                nowCalls.withLock { $0 += 1 }
                watchers.check()
                return clock.instant
            })
        controller.connect(sink, isFirstLaunch: true)
        controller.handle(.didFinishLaunching(.inactive))
        // Thread A delivers `$AppStart` and is held inside the sink.
        let first = Task { await onThreadOfItsOwn { controller.handle(.didBecomeActive) } }
        #expect(await sink.entered.value(orAfter: testBound, false))
        // Thread B ends the app while A still delivers; once B has decided (it reads the clock), A is let go.
        let decidedBefore = nowCalls.withLock { $0 }
        let second = Task {
            await onThreadOfItsOwn { () -> [String] in
                controller.handle(.willTerminate)
                return sink.recording.calls
            }
        }
        #expect(await watchers.wait(timeout: testBound) { nowCalls.withLock { $0 } > decidedBefore })
        sink.gate.fulfil(())
        let seenOnReturn = await second.value
        await first.value
        #expect(seenOnReturn.last == "sync", "willTerminate returned before its events were made durable: \(seenOnReturn)")
    }
}

/// A sink whose first tracked event waits for `gate`, telling `entered` that it does.
private final class GatedSink: AutoTrackSink, @unchecked Sendable {
    // @unchecked: made of thread-safe parts.
    let recording: RecordingSink
    let gate = Promise<Void>()
    let entered = Promise<Bool>()

    init(clock: ManualClock) { recording = RecordingSink(clock: clock) }

    func trackAutomatic(_ name: String, properties: Properties, at time: EpochMilliseconds?) -> Bool {
        if entered.fulfil(true) { _ = gate.wait(timeout: testBound) }
        return recording.trackAutomatic(name, properties: properties, at: time)
    }
    func pauseAllTimers(at now: UInt64?) { recording.pauseAllTimers(at: now) }
    func resumeAllTimers(at now: UInt64?) { recording.resumeAllTimers(at: now) }
    func requestFlush() { recording.requestFlush() }
    func appStartedChanged(_ started: Bool) { recording.appStartedChanged(started) }
    func flushAndWait(timeout: Duration) -> Bool { recording.flushAndWait(timeout: timeout) }
}
