import Foundation
import SpoorModel
import SpoorTesting
import Testing

import SpoorTracker
import SpoorSystem
import SpoorTestSupport

private struct BuyProduct: TrackedEvent {
    static let eventName = "BuyProduct"
    var product: String
    var price: Double
    var quantity: Int64
    var properties: Properties { ["product": .string(product), "price": .double(price), "quantity": .int(quantity)] }
}

private struct BadlyNamed: TrackedEvent {
    static let eventName = "not valid"
    var properties: Properties { [:] }
}

@Suite struct EventRecordTests {
    @Test func timeIsWhenTrackWasCalledNotWhenItWasWritten() async throws {
        let harness = try Harness()
        harness.tracker.track("E")
        harness.clock.advance(by: .seconds(30))
        let event = try #require(await harness.flushedEvents(named: "E").first)
        #expect(event.time == testEpoch)
        #expect(event.type == .track)
    }

    @Test func sequenceNumbersIncreaseAcrossRestartsAndIdentifyEachEvent() async throws {
        let harness = try Harness()
        for i in 0..<10 { harness.tracker.track("E", properties: ["i": .int(Int64(i))]) }
        let first = await harness.flushedEvents()
        #expect(first.map(\.sequence) == Array(1...10))
        // No random track id: (anonymous id, sequence) identifies an event, and the derived ids differ.
        #expect(first.allSatisfy { $0.trackID == 0 })
        #expect(Set(first.map { TrackID.of($0) }).count == 10)
        await harness.tracker.shutdown(timeout: testBound)
        let restarted = try harness.restarted()
        restarted.tracker.track("E")
        #expect(await restarted.flushedEvents().map(\.sequence) == [11])
    }

    @Test func aSequenceNumberIsNeverReusedAfterACrash() async throws {
        // The state file saved sequence 1..; the store holds records up to 41 that the state never saw.
        let directory = TemporaryDirectory()
        let first = try Harness(directory: directory)
        #expect(await first.tracker.shutdown(timeout: testBound))
        let store = InMemoryEventStore()
        store.append([Event(name: "Old", time: 0, sequence: 41, distinctID: "d", anonymousID: "a",
                            lib: LibInfo(lib: "x", libVersion: "y", method: .code))])
        let restarted = try first.restarted(store: store)
        restarted.tracker.track("New")
        #expect(await restarted.flushedEvents(named: "New").first?.sequence == 42)
    }

    @Test func typedEventsCarryTheirTypedProperties() async throws {
        let harness = try Harness()
        #expect(harness.tracker.track(BuyProduct(product: "tea", price: 3.5, quantity: 2)))
        #expect(harness.tracker.track(BadlyNamed()) == false)
        let event = try #require(await harness.flushedEvents(named: "BuyProduct").first)
        #expect(event.properties["product"] == "tea")
        #expect(event.properties["price"] == 3.5)
        #expect(event.properties["quantity"] == 2)
        #expect(event.lib.method == .code)
        #expect(harness.tracker.counters.rejected == [.invalidEventName: 1])
    }

    @Test func literalsCoverEveryValueType() async throws {
        let harness = try Harness()
        let properties: Properties = [
            "s": "text", "i": 42, "d": 1.5, "b": true, "t": .date(1_700_000_000_123), "l": ["x", "y"],
            "when": PropertyValue(Date(timeIntervalSince1970: 2)),
        ]
        harness.tracker.track("Types", properties: properties)
        let event = try #require(await harness.flushedEvents(named: "Types").first)
        for (key, value) in properties { #expect(event.properties[key] == value) }
        #expect(event.properties["when"] == .date(2000))
    }

    @Test func autoTrackEventsAreMarkedAndFollowTheOptions() async throws {
        let harness = try Harness { $0.autoTrack.events = [.appStart, .appEnd] }
        harness.tracker.registerSuperProperties(["$is_first_time": "super"])
        #expect(harness.tracker.trackAutomatic(AppStart(resumeFromBackground: false, isFirstTime: true)))
        #expect(harness.tracker.trackAutomatic(AppViewScreen(page: PageInfo(screenName: "Home"))) == false)
        #expect(harness.tracker.trackAutomatic(AppEnd(duration: 1.5, reason: "recovered"), at: testEpoch - 10_000))
        let events = await harness.flushedEvents()
        #expect(events.map(\.name) == ["$AppStart", "$AppEnd"])
        #expect(events.allSatisfy { $0.lib.method == .autoTrack })
        #expect(events[0].properties["$is_first_time"] == true)  // auto-track properties win over super properties
        #expect(events[0].properties["$resume_from_background"] == false)
        #expect(events[1].properties["event_duration"] == 1.5)
        #expect(events[1].properties["$app_end_reason"] == "recovered")
        #expect(events[1].time == testEpoch - 10_000)
    }

    @Test func presetEventTypesHaveTheSpecNames() {
        #expect(AppStart.eventName == "$AppStart")
        #expect(AppStartPassively.eventName == "$AppStartPassively")
        #expect(AppEnd.eventName == "$AppEnd")
        #expect(AppViewScreen.eventName == "$AppViewScreen")
        #expect(AppPageLeave.eventName == "$AppPageLeave")
        #expect(AppClick.eventName == "$AppClick")
        #expect(AppCrashed.eventName == "AppCrashed")
        let page = PageInfo(screenName: "Cart", title: "Your cart", url: "app://cart")
        #expect(AppPageLeave(page: page, duration: 2, referrer: "app://home").properties == [
            "$screen_name": "Cart", "$title": "Your cart", "$url": "app://cart", "event_duration": 2.0,
            "$referrer": "app://home",
        ])
        #expect(AppClick(elementType: "button", elementContent: "Pay", elementID: "pay", elementPath: "/cart/pay", page: page)
            .properties["$screen_name"] == "Cart")
        #expect(AppCrashed(reason: "SIGSEGV").properties == ["app_crashed_reason": "SIGSEGV"])
        #expect(AutoTrackOptions.all.contains([.appStart, .appStartPassively, .appEnd, .appViewScreen, .appClick, .appPageLeave, .appCrashed]))
    }

    @Test func shutdownMakesEverythingDurableAndLaterEventsAreCounted() async throws {
        let harness = try Harness()
        for _ in 0..<100 { harness.tracker.track("E") }
        #expect(await harness.tracker.shutdown(timeout: testBound))
        #expect(harness.store.events.count == 100)
        #expect(harness.store.syncCount >= 1)
        #expect(harness.store.isClosed)
        #expect(harness.tracker.track("Late") == false)
        #expect(harness.tracker.counters.droppedAfterShutdown == 1)
        #expect(await harness.tracker.shutdown(timeout: testBound))  // a second shutdown returns at once
        await harness.tracker.flush()  // and so does a flush after it
    }

    /// The synchronous flush (for `willTerminate`), on a thread of its own as the host's main thread would be.
    @Test func flushAndWaitStoresWhatWasTracked() async throws {
        let harness = try Harness()
        harness.tracker.track("E")
        let tracker = harness.tracker
        #expect(await onThreadOfItsOwn { tracker.flushAndWait(timeout: testBound) })
        #expect(harness.store.events.count == 1)
        harness.tracker.requestFlush()
    }
}
