import Foundation
import SpoorModel
import Testing

import SpoorTracker

@Suite struct ProfileTests {
    @Test func everyProfileOperationHasItsTypeAndOnlyItsProperties() async throws {
        let harness = try Harness()
        harness.tracker.registerSuperProperties(["plan": "pro"])
        harness.tracker.login("user-1")
        #expect(harness.tracker.profileSet(["name": "Ann", "age": 30]))
        #expect(harness.tracker.profileSetOnce(["signup": .date(42)]))
        #expect(harness.tracker.profileIncrement(["visits": 1, "spent": 2.5]))
        #expect(harness.tracker.profileAppend(["tags": ["a", "b"]]))
        #expect(harness.tracker.profileUnset(["age"]))
        #expect(harness.tracker.profileDelete())
        let profiles = await harness.flushedEvents().filter { $0.type != .trackSignup }
        #expect(profiles.map(\.type) == [.profileSet, .profileSetOnce, .profileIncrement, .profileAppend, .profileUnset, .profileDelete])
        #expect(profiles.map(\.properties) == [
            ["name": "Ann", "age": 30], ["signup": .date(42)], ["visits": 1, "spent": 2.5], ["tags": ["a", "b"]],
            ["age": true], [:],
        ])
        #expect(profiles.allSatisfy { $0.distinctID == "user-1" && $0.name.isEmpty })
    }

    @Test func profileValuesAreValidated() async throws {
        let harness = try Harness()
        #expect(harness.tracker.profileIncrement(["visits": "many"]) == false)
        #expect(harness.tracker.profileSet(["user_id": 1]) == false)
        #expect(harness.tracker.profileSet(["score": .double(.nan)]) == false)
        #expect(harness.tracker.profileAppend(["tags": Array(repeating: "x", count: 501)]) == false)
        #expect(harness.tracker.profileUnset(["bad key"]) == false)
        #expect(harness.tracker.counters.rejected == [
            .wrongValueType: 1, .reservedPropertyKey: 1, .nonFiniteNumber: 1, .listTooLong: 1, .invalidPropertyKey: 1,
        ])
        #expect(await harness.flushedEvents().isEmpty)
    }
}
