// One app run in the Apple configuration (Spoor without its SystemLibraries trait), on Linux:
//
//     AppleConfiguration STORAGE_DIR --vectors docs/vectors --out OUT_DIR [--server URL]
//
// It checks what the configuration is (the Swift wire path, gzip by default, zstd refused with its own error),
// tracks a realistic app session through the tracker, seals it into frames with the default codec, copies the
// frames to OUT_DIR/frames/ and writes the events this build's decoder reads from them to OUT_DIR/events.jsonl.
// With --server it then launches the tracker again to upload the sealed batches. Exits 1 on the first failure.
import Foundation
import SpoorLog
import SpoorModel
import SpoorTracker
@_spi(Testing) import SpoorWire
import SpoorWorkload

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("AppleConfiguration: \(message)\n".utf8))
    exit(1)
}

func argument(_ flag: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let arguments = CommandLine.arguments
guard arguments.count > 1, let vectors = argument("--vectors"), let out = argument("--out") else {
    fail("usage: AppleConfiguration STORAGE_DIR --vectors DIR --out DIR [--server URL]")
}
let storage = URL(fileURLWithPath: arguments[1])
let server = argument("--server").flatMap(URL.init(string:))

// MARK: What the configuration is

guard WirePath.standard == .swift, WirePath.allCases == [.swift] else { fail("the wire path is \(WirePath.standard), not swift alone") }
guard Codec.preferred == .gzip, !Codec.zstd.isAvailable, Codec.gzip.isAvailable else {
    fail("the preferred codec is \(Codec.preferred), zstd available: \(Codec.zstd.isAvailable)")
}
var zstdConfiguration = Configuration(storageDirectory: storage)
zstdConfiguration.upload.codec = .zstd
do {
    try zstdConfiguration.validate()
    fail("a configuration asking for zstd was accepted")
} catch {
    guard error.field == "upload.codec" else { fail("zstd refused for another reason: \(error)") }
}
do {
    _ = try BatchFrame.encode(payload: [], recordCount: 0, batchID: BatchID(high: 1, low: 2), sealedAt: 0, codec: .zstd)
    fail("a zstd frame was written")
} catch {
    guard error.kind == .codecUnavailable else { fail("writing zstd failed otherwise: \(error)") }
}
// The committed vectors: the zstd frame is refused with its own error, the others decode to the same events.
func vector(_ name: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: "\(vectors)/\(name).spb") else { fail("no vector \(name)") }
    return [UInt8](data)
}
do {
    _ = try FrameDecoder().decode(vector("zstd"))
    fail("a zstd frame was read")
} catch {
    guard error.kind == .codecUnavailable else { fail("reading zstd failed otherwise: \(error)") }
}
let fromVectors = try ["none", "gzip", "shared-none", "shared-gzip"].map { try EventDecoder().decodeBatch(try FrameDecoder().decode(vector($0)).payload) }
guard fromVectors.allSatisfy({ $0 == fromVectors[0] }), fromVectors[0].count == 3 else { fail("the vectors decode to other events") }

// MARK: A session, sealed

var configuration = Configuration(storageDirectory: storage)
configuration.tracking.appVersion = "3.1.0"
configuration.autoTrack.heartbeatInterval = nil
configuration.tracking.enableSession = true
try configuration.validate()
let tracker = try Tracker(configuration: configuration)
var workload = Workload(.iPhoneApp, seed: 27)
tracker.registerSuperProperties(workload.superProperties)
for _ in 0..<300 {
    let call = workload.nextCall()
    guard tracker.track(call.name, properties: call.properties) else { fail("\(call.name) was rejected") }
}
guard await tracker.shutdown() else { fail("the tracker did not shut down") }

// The tracker's log: the one process log under `logs/` (each process that opens a storage directory gets its own,
// beside the shared `rejected` folder).
let logs = Tracker.logDirectory(in: storage)
let processLogs = try FileManager.default.contentsOfDirectory(atPath: logs.path).filter { $0 != "rejected" }
guard processLogs.count == 1 else { fail("expected one process log in \(logs.path), found \(processLogs)") }
let logDirectory = logs.appendingPathComponent(processLogs[0], isDirectory: true)
let log = try EventLog(directory: logDirectory)
var sealed: [SealedBatch] = []
while let batch = try log.seal(maxRecords: 100) { sealed.append(batch) }
log.close()
guard !sealed.isEmpty, sealed.allSatisfy({ $0.codec == .gzip }) else { fail("sealed \(sealed.map(\.codec)), not gzip") }

let outbox = logDirectory.appendingPathComponent("outbox")
let frames = URL(fileURLWithPath: out).appendingPathComponent("frames")
try FileManager.default.createDirectory(at: frames, withIntermediateDirectories: true)
var lines = ""
var events = 0
let decoder = EventDecoder()
for name in try FileManager.default.contentsOfDirectory(atPath: outbox.path).sorted() {
    let bytes = [UInt8](try Data(contentsOf: outbox.appendingPathComponent(name)))
    try Data(bytes).write(to: frames.appendingPathComponent(name))
    let frame = try FrameDecoder().decode(bytes)
    guard frame.header.codec == .gzip else { fail("\(name) is \(frame.header.codec)") }
    for event in try decoder.decodeBatch(frame.payload) {
        lines += EventJSON.encode(event) + "\n"
        events += 1
    }
}
try Data(lines.utf8).write(to: URL(fileURLWithPath: out).appendingPathComponent("events.jsonl"))
print("AppleConfiguration: swift wire path, \(sealed.count) gzip frames, \(events) events")

// MARK: Upload

if let server {
    var uploading = Configuration(storageDirectory: storage)
    uploading.upload.serverURL = server
    uploading.upload.requestTimeout = .seconds(30)
    uploading.autoTrack.heartbeatInterval = nil
    let uploader = try Tracker(configuration: uploading)
    let result = await uploader.flush(timeout: .seconds(120))
    _ = await uploader.shutdown()
    guard result.isComplete else { fail("the upload did not complete: \(result)") }
    let delivered = uploader.counters.upload?.deliveredEvents ?? 0
    guard delivered == events else { fail("delivered \(delivered) events of \(events)") }
    print("AppleConfiguration: delivered \(delivered) events to \(server)")
}
