import Foundation
import Metrics
import MetricsTestKit
import SpoorModel
import SpoorTestSupport
import Testing
import SpoorWire

import SpoorTracker

/// The process's one metrics backend: `MetricsSystem.bootstrap` may run once per process, so every test
/// that needs it goes through here, and tells its trackers apart with ``Configuration/metricsDimensions``.
enum SharedTestMetrics {
    static let backend: TestMetrics = {
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()
}

@Suite("metrics and debug logging")
struct MetricsAndDebugTests {
    @Test func countersAreExportedThroughSwiftMetrics() async throws {
        let metrics = SharedTestMetrics.backend
        let dimension = ("test", UUID().uuidString)
        let h = try Harness { configuration in
            configuration.diagnostics.metricsDimensions = [dimension]
            configuration.tracking.beforeRecord = { $0.name == "Noise" ? .drop : .record }
        }
        h.tracker.track("One")
        h.tracker.track("Two")
        h.tracker.track("Noise")
        h.tracker.track("bad name")
        h.tracker.track("Bad", properties: ["score": .double(.infinity)])
        #expect(await h.tracker.shutdown(timeout: testBound))
        h.tracker.track("Late")

        func total(_ label: String, _ extra: [(String, String)] = []) -> Int64 {
            metrics.counters(label: label, dimensions: [dimension] + extra).map(\.totalValue).reduce(0, +)
        }
        #expect(total("spoor_events_accepted_total") == Int64(h.tracker.counters.accepted))
        #expect(total("spoor_events_accepted_total") == 3)
        #expect(total("spoor_events_rejected_total", [("rule", "invalid_event_name")]) == 1)
        #expect(total("spoor_events_rejected_total", [("rule", "non_finite_number")]) == 1)
        #expect(total("spoor_events_dropped_total", [("reason", "hook")]) == 1)
        #expect(total("spoor_events_dropped_total", [("reason", "log")]) == 0)
    }

    @Test func logEventsPrintsEachStoredEventAsAJSONLineFromTheWriter() async throws {
        let h = try Harness { $0.diagnostics.logEvents = true }
        h.tracker.registerSuperProperties(["plan": "pro"])
        h.tracker.track("Buy", properties: ["price": 3.5])
        h.tracker.track("bad name")
        _ = await h.flushedEvents()
        let lines = h.logs.all.filter { $0.level == .debug }.map(\.message)
        #expect(lines.count == 1)
        let event = try EventJSON.decode(try #require(lines.first))
        #expect(event.name == "Buy")
        #expect(event.properties["price"] == .double(3.5))
        #expect(event.properties["plan"] == "pro")
        #expect(event.properties["$os"] == "TestOS")
    }

    @Test func withoutLogEventsNothingIsLoggedPerEvent() async throws {
        let h = try Harness()
        h.tracker.track("Buy")
        _ = await h.flushedEvents()
        #expect(h.logs.all.filter { $0.level == .debug }.isEmpty)
    }
}
