// Drives the tracker as an app would, then reads its storage directory back with the log and the decoder.
//
//     swift run --package-path Examples/TrackerDemo TrackerDemo [STORAGE_DIR]
import Foundation
import Logging
import SpoorCore
import SpoorSerializer
import SpoorTracker
import SpoorTransport

/// A typed event: the app declares the name and the properties once.
struct BuyProduct: TrackedEvent {
    static let eventName = "BuyProduct"
    var product: String
    var price: Double
    var quantity: Int64
    var properties: Properties { ["product": .string(product), "price": .double(price), "quantity": .int(quantity)] }
}

let directory = CommandLine.arguments.count > 1
    ? URL(fileURLWithPath: CommandLine.arguments[1])
    : FileManager.default.temporaryDirectory.appendingPathComponent("spoor-demo-\(UUID().uuidString)")
// A manual clock makes the timer's duration and the times below predictable.
let clock = ManualClock(wall: 1_763_769_600_000)  // 2025-11-22T00:00:00Z

func makeTracker() throws -> Tracker {
    var configuration = Configuration(storageDirectory: directory)
    configuration.appVersion = "1.4.2"
    configuration.wallClock = clock
    configuration.monotonicClock = clock
    configuration.enableSession = true
    // The tracker's warnings (rejections) go to standard output here, in line with the rest.
    configuration.logger = Logger(label: "spoor.demo") { StreamLogHandler.standardOutput(label: $0) }
    return try Tracker(configuration: configuration)
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

print("-- the log, decoded (one JSON line per record)")
let log = try EventLog(directory: Tracker.logDirectory(in: directory))
let decoder = EventDecoder()
try log.forEachRecord { payload in
    for event in try decoder.decodeBatch(payload) { print(EventJSON.encode(event)) }
}
print("-- \(log.recordCount) records in the log")
log.close()
if CommandLine.arguments.count <= 1 { try? FileManager.default.removeItem(at: directory) }
