// Drives the tracker as an app would, then reads its storage directory back with the log and the decoder.
// With `--server URL` it is one launch of an app that uploads: it tracks a burst, flushes to the collector
// and says what was delivered or what is kept and why. Run it again and the new launch sends the leftovers.
//
//     swift run --package-path Examples/TrackerDemo TrackerDemo [STORAGE_DIR] [--server URL]
import Foundation
import Logging
import SpoorModel
import SpoorTesting
import SpoorWire
import SpoorTracker
import SpoorLog

/// A typed event: the app declares the name and the properties once.
struct BuyProduct: TrackedEvent {
    static let eventName = "BuyProduct"
    var product: String
    var price: Double
    var quantity: Int64
    var properties: Properties { ["product": .string(product), "price": .double(price), "quantity": .int(quantity)] }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var server: URL?
if let flag = arguments.firstIndex(of: "--server"), flag + 1 < arguments.count {
    server = URL(string: arguments[flag + 1])
    arguments.removeSubrange(flag...flag + 1)
}
let directory = arguments.first.map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("spoor-demo-\(UUID().uuidString)")
// A manual clock makes the timer's duration and the times below predictable.
let clock = ManualClock(wall: 1_763_769_600_000)  // 2025-11-22T00:00:00Z

func makeTracker() throws -> Tracker {
    var configuration = Configuration(storageDirectory: directory)
    configuration.tracking.appVersion = "1.4.2"
    configuration.clock = clock
    configuration.autoTrack.heartbeatInterval = nil
    configuration.tracking.enableSession = true
    // The tracker's warnings (rejections) go to standard output here, in line with the rest.
    configuration.diagnostics.logger = Logger(label: "spoor.demo") { StreamLogHandler.standardOutput(label: $0) }
    return try Tracker(configuration: configuration)
}

if let server {
    // An uploading launch: real time, so the uploader's backoff and the collector's times are real.
    var configuration = Configuration(storageDirectory: directory)
    configuration.tracking.appVersion = "1.4.2"
    configuration.upload.serverURL = server
    configuration.upload.requestTimeout = .seconds(5)
    configuration.diagnostics.logger = Logger(label: "spoor.demo") { StreamLogHandler.standardOutput(label: $0) }
    let tracker = try Tracker(configuration: configuration)
    let user = "user-\(tracker.anonymousID.prefix(4))"
    tracker.login(user)
    for (index, product) in ["tea", "cups", "kettle", "honey", "lemons"].enumerated() {
        tracker.track("ViewProduct", properties: ["product": .string(product), "position": .int(Int64(index))])
    }
    tracker.track(BuyProduct(product: "kettle", price: 24.9, quantity: 1))
    let result = await tracker.flush(timeout: .seconds(10))
    print("  flush: \(result)")
    await tracker.shutdown()
    if let upload = tracker.counters.upload {
        print("  upload counters: delivered \(upload.deliveredBatches) batches / \(upload.deliveredEvents) events / \(upload.deliveredBytes) bytes, retries \(upload.retries), duplicates \(upload.duplicateBatches)")
    }
    exit(result.isComplete ? 0 : 1)
}

print("-- first launch: storage directory \(directory.path)")
var tracker = try makeTracker()
print("  anonymous id \(tracker.anonymousID)")
tracker.registerSuperProperties(["plan": "free", "ab_group": "B"])
tracker.registerDynamicSuperProperties { ["network": "wifi"] }
tracker.track("ViewProduct", properties: ["product": "tea", "price": 3.5, "tags": ["green", "loose"]])
clock.advance(by: .seconds(2))
tracker.track(BuyProduct(product: "tea", price: 3.5, quantity: 2))
tracker.track("bad name", properties: ["ok": true])  // invalid name: rejected, nothing recorded
tracker.track("Share", properties: ["time": 1])  // reserved key: rejected whole
let reading = tracker.timerStart("ReadArticle")
clock.advance(by: .milliseconds(12_345))
tracker.timerEnd(reading, properties: ["article": "tea-guide"])
tracker.login("user-42")  // $SignUp links the anonymous id to the login id
tracker.profileSet(["name": "Ann", "vip": false])
tracker.track("Checkout", properties: ["total": 7.0])
await tracker.shutdown()
let counters = tracker.counters
print("  counters: accepted \(counters.accepted), rejected \(counters.rejectedTotal) \(counters.rejected.map { "\($0.key)=\($0.value)" }.sorted()), dropped by log \(counters.droppedByLog)")

print("-- second launch: identity and super properties were persisted")
clock.advance(by: .seconds(60))
tracker = try makeTracker()
print("  distinct id \(tracker.distinctID), login id \(tracker.loginID ?? "-"), super properties \(tracker.superProperties.keys.sorted())")
tracker.logout()
tracker.track("Browse")
await tracker.shutdown()

print("-- the storage directory's logs, decoded (one JSON line per event)")
// Each launch writes a log of its own under `logs/`; the second launch adopted the first's (it had closed it),
// sealing its events into a batch. A snapshot reads a log without opening it: its sealed batches, then its records.
let logs = Tracker.logDirectory(in: directory)
let decoder = EventDecoder()
var stored = 0
for name in try FileManager.default.contentsOfDirectory(atPath: logs.path).sorted() where name != "rejected" {
    let snapshot = try EventLog.snapshot(directory: logs.appendingPathComponent(name, isDirectory: true))
    var payloads = snapshot.batches.compactMap { $0.frame?.payload }
    payloads += snapshot.records.map(\.batch)
    for payload in payloads {
        for event in try decoder.decodeBatch(payload) {
            print(EventJSON.encode(event))
            stored += 1
        }
    }
}
print("-- \(stored) events stored")
if arguments.isEmpty { try? FileManager.default.removeItem(at: directory) }
