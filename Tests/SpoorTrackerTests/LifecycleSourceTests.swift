import Foundation
import SpoorModel
import Testing
import SpoorTracker
import SpoorSystem

/// Collects delivered signals.
final class SignalRecorder: Sendable {
    private let recorded = Locked<[LifecycleSignal]>([])
    var signals: [LifecycleSignal] { recorded.withLock { $0 } }
    func record(_ signal: LifecycleSignal) { recorded.withLock { $0.append(signal) } }
}

/// Stands in for `UIApplication.shared`.
final class FakeApplication: NSObject, @unchecked Sendable {}

@Suite("Lifecycle sources")
struct LifecycleSourceTests {
    @Test("A manual source delivers its 1,000th signal the same way as its first")
    func deliveryDoesNotGrow() {
        let source = ManualLifecycleSource()
        let depths = Locked<[Int]>([])
        source.start { _ in depths.withLock { $0.append(Thread.callStackReturnAddresses.count) } }
        for _ in 0..<1_000 { source.send(.didBecomeActive) }
        let all = depths.withLock { $0 }
        #expect(all.count == 1_000)
        #expect(all.first == all.last, "the stack under send grew from \(all.first ?? 0) to \(all.last ?? 0) frames")
        source.stop()
    }

    @Test("NotificationCenter source: UIKit names become signals; other senders are ignored")
    func notificationCenter() async {
        let center = NotificationCenter()
        let application = FakeApplication()
        let source = NotificationCenterLifecycleSource(center: center, application: application) { .notRunning }
        let recorder = SignalRecorder()
        source.start { recorder.record($0) }
        let names = [
            "UIApplicationDidFinishLaunchingNotification", "UIApplicationDidBecomeActiveNotification",
            "UIApplicationWillResignActiveNotification", "UIApplicationDidEnterBackgroundNotification",
            "UIApplicationWillEnterForegroundNotification", "UIApplicationWillTerminateNotification",
        ]
        for name in names {
            center.post(name: Notification.Name(name), object: application)
            center.post(name: Notification.Name(name), object: FakeApplication())  // someone else's
            center.post(name: Notification.Name(name), object: nil)
        }
        #expect(recorder.signals == [
            .didFinishLaunching(.inactive), .didBecomeActive, .willResignActive, .didEnterBackground,
            .willEnterForeground, .willTerminate,
        ])
        source.stop()
        center.post(name: Notification.Name(names[1]), object: application)
        #expect(recorder.signals.count == 6)
    }

    @Test("NotificationCenter source: a background launch is passive; late attach catches up", arguments: [
        (ApplicationState.background, [LifecycleSignal.didFinishLaunching(.background), .didFinishLaunching(.background)]),
        (ApplicationState.active, [LifecycleSignal.didBecomeActive, .didFinishLaunching(.inactive)]),
        (ApplicationState.inactive, [LifecycleSignal.didFinishLaunching(.inactive)]),
    ])
    func launchState(state: ApplicationState, expected: [LifecycleSignal]) async {
        let center = NotificationCenter()
        let application = FakeApplication()
        let source = NotificationCenterLifecycleSource(center: center, application: application) { state }
        let recorder = SignalRecorder()
        source.start { recorder.record($0) }
        center.post(name: Notification.Name("UIApplicationDidFinishLaunchingNotification"), object: application)
        #expect(recorder.signals == expected)
        source.stop()
    }

    @Test("NotificationCenter source drives the lifecycle end to end")
    func notificationCenterDrivesLifecycle() async throws {
        let center = NotificationCenter()
        let application = FakeApplication()
        let harness = try await LifecycleHarness()
        let source = NotificationCenterLifecycleSource(center: center, application: application) { .notRunning }
        source.start { [controller = harness.controller] in controller.handle($0) }
        func post(_ name: String) { center.post(name: Notification.Name("UIApplication\(name)Notification"), object: application) }
        post("DidFinishLaunching")
        post("DidBecomeActive")
        harness.advance(3_000)
        post("WillResignActive")
        post("DidEnterBackground")
        post("DidEnterBackground")
        #expect(await harness.names == ["$AppStart", "$AppEnd"])
        #expect(await harness.events[1].duration == 3.0)
        source.stop()
    }

    @Test("Manual source delivers while attached")
    func manual() async {
        let source = ManualLifecycleSource()
        let recorder = SignalRecorder()
        source.send(.didBecomeActive)
        source.start { recorder.record($0) }
        source.send(.didBecomeActive)
        source.send(.willTerminate)
        source.stop()
        source.send(.didEnterBackground)
        #expect(recorder.signals == [.didBecomeActive, .willTerminate])
    }

    @Test("Process source: start is a user launch; background/foreground/terminate map to signals")
    func processSource() async {
        let source = ProcessLifecycleSource(handlesSignals: false, handlesExit: false)
        let recorder = SignalRecorder()
        source.start { recorder.record($0) }
        source.background()
        source.foreground()
        source.terminate()
        source.stop()
        #expect(recorder.signals == [
            .didFinishLaunching(.inactive), .didBecomeActive,
            .willResignActive, .didEnterBackground,
            .willEnterForeground, .didBecomeActive,
            .didEnterBackground, .willTerminate,
        ])
    }
}
