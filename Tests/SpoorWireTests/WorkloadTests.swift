import SpoorModel
import SpoorWire
import SpoorWorkload
import Testing
import SpoorTestSupport
import SpoorLog

/// The realistic workloads: deterministic, shaped like real traffic, and what they cost in the
/// log and on the wire against Sensors' `base64(gzip(JSON))` of the same events.
@Suite struct WorkloadTests {
    @Test("equal seeds give equal streams", arguments: Workload.Kind.allCases)
    func deterministic(kind: Workload.Kind) {
        var a = Workload(kind, seed: 11)
        var b = Workload(kind, seed: 11)
        var c = Workload(kind, seed: 12)
        let first = a.events(300)
        #expect(first == b.events(300))
        #expect(first != c.events(300))
    }

    @Test func appSessionHasEveryKindOfEvent() {
        var workload = Workload(.iPhoneApp, seed: 1)
        let events = workload.events(2000)
        let names = Set(events.map(\.name))
        for name in ["$AppStart", "$AppEnd", "$AppViewScreen", "$AppPageLeave", "$AppClick", "$SignUp", "ViewProduct", "AddToCart", "PayOrder"] {
            #expect(names.contains(name), "\(name) missing")
        }
        #expect(events.contains { $0.properties["$referrer"] != nil })
        #expect(events.contains { $0.name == "$AppClick" && $0.properties["$element_path"] != nil })
        #expect(events.contains { $0.name == "$AppPageLeave" && $0.properties["$event_duration"] != nil })
        #expect(events.contains { $0.name == "PayOrder" && $0.properties["$event_duration"] != nil })
        // Presets (17) plus call-site ones, and super properties once logged in.
        #expect(events.allSatisfy { $0.properties.count >= 17 })
        #expect(events.contains { $0.properties["member_level"] != nil && $0.loginID != nil })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time && $0.sequence + 1 == $1.sequence })
    }

    @Test func serviceEventsAreRequests() {
        var workload = Workload(.linuxService, seed: 1)
        let events = workload.events(500)
        #expect(events.allSatisfy { $0.name == "HandleRequest" && $0.properties.count >= 20 && $0.properties["route"] != nil })
        #expect(Set(events.map(\.distinctID)).count > 50)
    }

    /// Bytes per whole event (record header + Batch entry, as a log without context records would hold it)
    /// and in 50-event zstd frames sealed from whole events, against Sensors' encoding of the same 50 events.
    /// What the tracker writes (context records) is measured by `RealisticLogTests` in SpoorTrackerTests.
    @Test("bytes per realistic event", zstdLinked, arguments: Workload.Kind.allCases)
    func bytesPerEvent(kind: Workload.Kind) throws {
        var workload = Workload(kind, seed: 2026)
        let events = workload.events(1000)
        let encoder = EventEncoder()
        var logBytes = 0
        for event in events {
            var entry: [UInt8] = []
            try encoder.appendBatchEntry(event, to: &entry)
            logBytes += RecordFormat.headerSize + entry.count
        }
        var sensors = 0, zstd = 0, gzip = 0
        for start in stride(from: 0, to: events.count, by: 50) {
            let batch = Array(events[start..<start + 50])
            sensors += try WireSizeTests.sensorsBytes(batch)
            zstd += try WireSizeTests.spoorBytes(batch, codec: .zstd)
            gzip += try WireSizeTests.spoorBytes(batch, codec: .gzip)
        }
        // What the per-event random track id costs on the wire: the same frames with track ids left out.
        var withoutTrackIDs = 0, plain = 0
        for start in stride(from: 0, to: events.count, by: 50) {
            let batch = events[start..<start + 50].map { event in
                var event = event
                event.trackID = 0
                return event
            }
            withoutTrackIDs += try WireSizeTests.spoorBytes(batch, codec: .zstd)
            plain += try WireSizeTests.spoorBytes(Array(events[start..<start + 50]), codec: .zstd, sharedContext: false)
        }
        let n = Double(events.count)
        print(String(format: "%@: 50-event zstd frames of plain events (before shared contexts) %.1f B/event; shared context without track ids %.1f B/event",
                     kind.rawValue, Double(plain) / n, Double(withoutTrackIDs) / n))
        #expect(zstd < plain, "the shared context makes frames smaller")
        print(String(format: "%@: whole events %.1f B/event; 50-event frames of whole events: zstd %.1f, gzip %.1f, Sensors base64(gzip(JSON)) %.1f B/event; zstd/Sensors %.2f",
                     kind.rawValue, Double(logBytes) / n, Double(zstd) / n, Double(gzip) / n, Double(sensors) / n, Double(zstd) / Double(sensors)))
        #expect(Double(zstd) < Double(sensors))
    }
}
