import Foundation
import Testing

import SpoorTracker
import SpoorTestSupport

@Suite struct ConfigurationTests {
    private func error(_ change: (inout Configuration) -> Void) -> ConfigurationError? {
        let directory = TemporaryDirectory()
        var configuration = Configuration(storageDirectory: directory.url)
        change(&configuration)
        do {
            _ = try Tracker(configuration: configuration)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaultsAreValidAndMatchTheIssue() throws {
        let configuration = Configuration(storageDirectory: URL(fileURLWithPath: "/tmp/x"))
        #expect(configuration.upload.flushBulkSize == 100)
        #expect(configuration.upload.flushInterval == .seconds(15))
        #expect(configuration.storage.maxEvents == 10_000)
        #expect(configuration.storage.maxBufferedEvents == 10_000)
        #expect(configuration.tracking.enableSession == false)
        #expect(configuration.upload.maxBatchesInFlight == 4)
        try configuration.validate()
    }

    /// Every invalid field is named by its path in the sections, as the user wrote it.
    @Test(arguments: [
        "upload.flushBulkSize", "upload.flushInterval", "storage.maxEvents", "storage.maxBufferedEvents", "storage.maxBytes",
        "upload.serverURL", "storageDirectory", "storage.durability", "tracking.sessionIdleTimeout",
        "tracking.sessionMaxDuration", "tracking.presetOverrides", "upload.maxBatchesInFlight", "upload.backoff",
        "upload.requestTimeout", "upload.token", "upload.rejectedLimits", "autoTrack.heartbeatInterval",
    ])
    func invalidFieldIsNamed(field: String) {
        let error = error { c in
            switch field {
            case "upload.flushBulkSize": c.upload.flushBulkSize = 0
            case "upload.flushInterval": c.upload.flushInterval = .milliseconds(1)
            // Fewer than one upload's worth of events.
            case "storage.maxEvents": c.storage.maxEvents = 10
            case "storage.maxBufferedEvents": c.storage.maxBufferedEvents = 0
            case "storage.maxBytes": c.storage.maxBytes = 100
            case "upload.serverURL": c.upload.serverURL = URL(string: "ftp://example.com")
            case "storageDirectory": c.storageDirectory = URL(string: "https://example.com/x")!
            case "storage.durability": c.storage.durability = .batched(interval: .zero)
            case "tracking.sessionIdleTimeout": c.tracking.sessionIdleTimeout = .zero
            case "tracking.sessionMaxDuration": c.tracking.sessionMaxDuration = .seconds(1)
            case "upload.maxBatchesInFlight": c.upload.maxBatchesInFlight = 0
            case "upload.backoff": c.upload.backoff = Backoff(base: .seconds(10), cap: .seconds(1))
            case "upload.requestTimeout": c.upload.requestTimeout = .milliseconds(10)
            case "upload.token": c.upload.token = "two\nlines"
            case "upload.rejectedLimits": c.upload.rejectedLimits = RejectedAreaLimits(maxBatches: 0, maxBytes: 1 << 20)
            case "autoTrack.heartbeatInterval": c.autoTrack.heartbeatInterval = .milliseconds(10)
            default: c.tracking.presetOverrides = ["bad key": "x"]
            }
        }
        #expect(error?.field == field)
        #expect(error?.description.contains("invalid configuration: \(field): ") == true)
    }

    /// A zero base would retry in a tight loop; a cap past a day would leave events waiting that long.
    @Test func theBackoffIsBoundedBothWays() {
        #expect(error { $0.upload.backoff = Backoff(base: .zero, cap: .seconds(1)) }?.field == "upload.backoff")
        #expect(error { $0.upload.backoff = Backoff(base: .seconds(1), cap: .seconds(86_401)) }?.field == "upload.backoff")
        #expect(error { $0.upload.backoff = Backoff(base: .milliseconds(1), cap: .seconds(86_400)) } == nil)
    }

    @Test func theUploadWindowIsBoundedByTheOutbox() {
        let error = error { $0.upload.maxBatchesInFlight = 17 }
        #expect(error?.field == "upload.maxBatchesInFlight")
        #expect(error?.description.contains("between 1 and 16, got 17") == true)
        #expect(self.error { $0.upload.maxBatchesInFlight = 16 } == nil)
    }

    @Test func unusableStorageDirectoryIsAnError() throws {
        let directory = TemporaryDirectory()
        let file = directory.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let error = error { $0.storageDirectory = file.appendingPathComponent("below-a-file") }
        #expect(error?.field == "storageDirectory")
    }
}
