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
        #expect(configuration.flushBulkSize == 100)
        #expect(configuration.flushInterval == .seconds(15))
        #expect(configuration.maxQueuedEvents == 10_000)
        #expect(configuration.maxBufferedEvents == 10_000)
        #expect(configuration.enableSession == false)
        #expect(configuration.maxBatchesInFlight == 4)
        try configuration.validate()
    }

    @Test(arguments: [
        "flushBulkSize", "flushInterval", "maxQueuedEvents", "maxBufferedEvents", "maxLogBytes", "serverURL", "storageDirectory",
        "durability", "sessionIdleTimeout", "sessionMaxDuration", "presetOverrides", "maxBatchesInFlight",
        "uploadBackoff",
    ])
    func invalidFieldIsNamed(field: String) {
        let error = error { c in
            switch field {
            case "flushBulkSize": c.flushBulkSize = 0
            case "flushInterval": c.flushInterval = .milliseconds(1)
            case "maxQueuedEvents": c.maxQueuedEvents = 10
            case "maxBufferedEvents": c.maxBufferedEvents = 0
            case "maxLogBytes": c.maxLogBytes = 100
            case "serverURL": c.serverURL = URL(string: "ftp://example.com")
            case "storageDirectory": c.storageDirectory = URL(string: "https://example.com/x")!
            case "durability": c.durability = .batched(interval: .zero)
            case "sessionIdleTimeout": c.sessionIdleTimeout = .zero
            case "sessionMaxDuration": c.sessionMaxDuration = .seconds(1)
            case "maxBatchesInFlight": c.maxBatchesInFlight = 0
            case "uploadBackoff": c.uploadBackoff = Backoff(base: .seconds(10), cap: .seconds(1))
            default: c.presetOverrides = ["bad key": "x"]
            }
        }
        #expect(error?.field == field)
        #expect(error?.description.contains(field) == true)
    }

    /// A zero base would retry in a tight loop; a cap past a day would leave events waiting that long.
    @Test func theBackoffIsBoundedBothWays() {
        #expect(error { $0.uploadBackoff = Backoff(base: .zero, cap: .seconds(1)) }?.field == "uploadBackoff")
        #expect(error { $0.uploadBackoff = Backoff(base: .seconds(1), cap: .seconds(86_401)) }?.field == "uploadBackoff")
        #expect(error { $0.uploadBackoff = Backoff(base: .milliseconds(1), cap: .seconds(86_400)) } == nil)
    }

    @Test func theUploadWindowIsBoundedByTheOutbox() {
        let error = error { $0.maxBatchesInFlight = 17 }
        #expect(error?.field == "maxBatchesInFlight")
        #expect(error?.description.contains("between 1 and 16, got 17") == true)
        #expect(self.error { $0.maxBatchesInFlight = 16 } == nil)
    }

    @Test func unusableStorageDirectoryIsAnError() throws {
        let directory = TemporaryDirectory()
        let file = directory.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let error = error { $0.storageDirectory = file.appendingPathComponent("below-a-file") }
        #expect(error?.field == "storageDirectory")
    }
}
