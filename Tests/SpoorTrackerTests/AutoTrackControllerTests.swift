import Foundation
import SpoorModel
import SpoorTesting
import SpoorTestSupport
import SpoorSystem
import Testing

@testable import SpoorTracker

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
        let h = try Harness { $0.autoTrack = .all }
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
}
