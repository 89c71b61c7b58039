import Foundation
import SpoorModel
import SpoorTesting
import Testing
import SpoorTracker
import SpoorTestSupport


/// Checks the lifecycle invariants over the events of a whole run, across process deaths.
struct InvariantChecker {
    var sessionOpen = false
    /// Pages whose `$AppViewScreen` went out in this process and that the host has not hidden.
    var viewed: Set<String> = []
    /// Pages whose timer runs: a `$AppPageLeave` for anything else is a page left twice.
    var timed: Set<String> = []
    var violations: [String] = []

    mutating func newProcess() {
        viewed = []
    }

    mutating func hostHid(_ page: String) { viewed.remove(page) }

    mutating func check(_ event: RecordedEvent, step: Int) {
        if let duration = event.duration, duration < 0 { violations.append("step \(step): negative \(event)") }
        let page = event.properties["$screen_name"].flatMap { if case .string(let s) = $0 { s } else { nil } }
        switch event.name {
        case "$AppStart":
            if sessionOpen { violations.append("step \(step): two $AppStart without $AppEnd") }
            sessionOpen = true
            timed = viewed
        case "$AppEnd":
            if !sessionOpen { violations.append("step \(step): $AppEnd without $AppStart") }
            if !timed.isEmpty { violations.append("step \(step): $AppEnd before leaving \(timed)") }
            sessionOpen = false
        case "$AppViewScreen":
            guard let page else { return violations.append("step \(step): view without page") }
            if timed.contains(page) { violations.append("step \(step): \(page) viewed while timed") }
            if !sessionOpen { violations.append("step \(step): view outside a session") }
            timed.insert(page)
            viewed.insert(page)
        case "$AppPageLeave":
            guard let page else { return violations.append("step \(step): leave without page") }
            if timed.remove(page) == nil { violations.append("step \(step): \(page) left twice or never timed") }
        default:
            break
        }
    }
}

@Suite("Lifecycle properties over random signal sequences")
struct LifecyclePropertyTests {
    static let signals: [LifecycleSignal] = [
        .didFinishLaunching(.inactive), .didFinishLaunching(.background), .willEnterForeground, .didBecomeActive,
        .willResignActive, .didEnterBackground, .willTerminate,
    ]

    @Test("Starts and ends alternate, one $AppEnd per $AppStart, no negative duration, every page left once",
          arguments: 0..<40)
    func randomSequences(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed &* 7919 &+ 1)
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock.lifecycleTest()
        var harness = try await LifecycleHarness(.controller, directory: directory, clock: clock)
        var checker = InvariantChecker()
        var seen = 0
        var visible: [String] = []
        let pages = ["home", "list", "detail", "cart", "modal"]

        func drain(step: Int) async {
            let events = await harness.events
            for event in events.dropFirst(seen) { checker.check(event, step: step) }
            seen = events.count
        }

        for step in 0..<120 {
            clock.advance(by: .milliseconds(Int64.random(in: 0...5_000, using: &random)))
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                await harness.send(Self.signals.randomElement(using: &random)!)
            case 45..<62:
                let page = pages.randomElement(using: &random)!
                await harness.appear(page)
                if !visible.contains(page) { visible.append(page) }
            case 62..<76:
                let page = (visible.randomElement(using: &random)) ?? pages[0]
                await harness.disappear(page)
                visible.removeAll { $0 == page }
                await drain(step: step)
                checker.hostHid(page)
            case 76..<84:
                harness.controller.click(AppClick(elementType: "button", elementPath: "button\(Int.random(in: 0..<3, using: &random))"))
            case 84..<90:
                await harness.heartbeat()
            case 90..<94:
                // The program calls shutdown() (as the README's Linux example does) and a new one starts.
                await harness.shutdown()
                await drain(step: step)
                if checker.sessionOpen { checker.violations.append("step \(step): shutdown left the session open") }
                clock.advance(by: .milliseconds(Int64.random(in: 1...100_000, using: &random)))
                harness = try await LifecycleHarness(.controller, directory: directory, clock: clock, isFirstLaunch: false)
                seen = 0
                visible = []
                checker.newProcess()
            default:
                // The process dies (crash or kill -9) and a new one starts over the same storage.
                if Bool.random(using: &random) { await harness.crash(reason: "SIGSEGV") }
                await drain(step: step)
                clock.advance(by: .milliseconds(Int64.random(in: 1...100_000, using: &random)))
                harness = try await LifecycleHarness(.controller, directory: directory, clock: clock, isFirstLaunch: false)
                seen = 0
                visible = []
                checker.newProcess()
            }
            await drain(step: step)
        }
        #expect(checker.violations.isEmpty, "seed \(seed): \(checker.violations.prefix(5))")
    }
}
