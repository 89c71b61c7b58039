// Fuzzes the collector's request path (body → frame → events → rows → store) against an in-memory
// SQLite store. Any body must get a status the API defines; a 200 stores exactly the batch's events
// (once: the same body again is a duplicate), and any other status stores nothing. The three ways a body is
// read must agree: rows from the decoder's views (its one Swift pass, else protobuf-c) equal rows from decoded
// `Event`s with the same answers, the views equal protobuf-c's own views or errors, and a store that keeps
// frames (JetStream) gets the answer a SQL store gets. Inputs that start with 0xFE carry a `Batch` payload,
// sealed here into a valid frame so that the fuzzer reaches the event decoder past the frame's checksums.
import CFuzzDriver
import Foundation
import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorModel
import SpoorSystem
@_spi(Testing) import SpoorWire

let store = try! SQLiteStore(path: nil)
let limits = IngestLimits(maxBody: 1 << 20, maxDecompressed: 1 << 20)
let ingest = Ingest(limits: limits, store: store)
let eventPath = Ingest(limits: limits, store: store, keepsEvents: true)
let framePath = Ingest(limits: limits, store: FrameKeepingStore())

/// A store that keeps frames, as the JetStream store does: ingest checks every event but writes no rows.
struct FrameKeepingStore: BatchStore {
    var keepsFrames: Bool { true }
    func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult { .stored }
    func ping() async throws(StoreUnavailable) {}
    func run() async {}
}

/// Runs async work to completion from the fuzzer's synchronous callback (libFuzzer's thread, not a task). An input
/// the request path never answers is a finding: it stops the run, as a crash does.
func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let result = Promise<T>()
    Task { result.fulfil(await work()) }
    guard let value = result.wait(timeout: .seconds(600)) else { fatalError("no answer within 10 minutes: a hang") }
    return value
}

func storedEvents() -> Int { (try! store.countsByName()).reduce(0) { $0 + $1.count } }

/// The body for a fuzz input: one that starts with 0xFE is `0xFE, record count, Batch payload`, sealed here into a
/// valid frame (codec none) so that the fuzzer reaches the event decoder past the checksums; others as they are.
/// `CorpusReplayTests` reads the corpus the same way.
func body(forFuzzInput input: [UInt8]) -> [UInt8] {
    guard input.count >= 2, input[0] == 0xFE else { return input }
    return (try? BatchFrame.encode(payload: Array(input.dropFirst(2)), recordCount: Int(input[1]),
                                   batchID: BatchID(high: 7, low: UInt64(input.count)), sealedAt: 0, codec: .none)) ?? input
}

/// Every view of a payload as values, through the Swift pass or protobuf-c, or the error.
func views(_ payload: [UInt8], throughProtobufC: Bool) -> Result<[[String]], DecodeError> {
    let decoder = EventDecoder()
    decoder.viewsThroughProtobufC = throughProtobufC
    var all: [[String]] = []
    return payload.withUnsafeBytes { raw in
        Result { () throws(DecodeError) in
            try decoder.forEachEventView(inBatch: raw) { view in
                var fields = [view.name, view.distinctID, view.anonymousID, view.loginID, view.sessionID, view.lib,
                              view.libVersion, view.appVersion].map { String(decoding: $0, as: UTF8.self) }
                fields += ["\(view.type.rawValue) \(view.libMethod.rawValue) \(view.time) \(view.trackID) \(view.sequence)"]
                for index in 0..<view.propertyCount {
                    let property = view.property(index)
                    fields.append(String(decoding: property.key, as: UTF8.self) + "=" + "\(property.value)")
                }
                all.append(fields)
            }
            return all
        }
    }
}

/// Whether two refusals tell the client the same: status, body and `Retry-After`.
func sameAnswer(_ a: IngestResponse, _ b: IngestResponse) -> Bool {
    a.status == b.status && a.body == b.body && a.retryAfter == b.retryAfter
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let body = body(forFuzzInput: size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    if let payload = try? FrameDecoder(limits: FrameLimits(maxFrameBytes: 1 << 20, maxUncompressedBytes: 1 << 20)).decode(body).payload {
        let swift = views(payload, throughProtobufC: false)
        let protobufC = views(payload, throughProtobufC: true)
        guard swift == protobufC else { fatalError("the Swift pass and protobuf-c differ:\n  \(swift)\n  \(protobufC)") }
    }
    let fast = ingest.decode(body, receivedAt: 0)
    switch (fast, eventPath.decode(body, receivedAt: 0)) {
    case (.success(let fast), .success(let reference)):
        guard fast.0.rows.all == reference.0.rows.all else { fatalError("rows from views differ from rows from events") }
    case (.failure(let fast), .failure(let reference)):
        guard sameAnswer(fast, reference) else { fatalError("the two paths answer differently: \(fast.body) / \(reference.body)") }
    default:
        fatalError("one path decoded what the other refused")
    }
    switch (fast, framePath.decode(body, receivedAt: 0)) {
    case (.success(let rows), .success(let frames)):
        guard rows.0.eventCount == frames.0.eventCount, frames.0.rows.count == 0, frames.0.frame == body else {
            fatalError("a frame-keeping store got another batch")
        }
    case (.failure(let rows), .failure(let frames)):
        guard sameAnswer(rows, frames) else { fatalError("a frame-keeping store got another answer: \(rows.body) / \(frames.body)") }
    default:
        fatalError("a frame-keeping store got another status")
    }
    let before = storedEvents()
    let answer = blocking { await ingest.handle(body, receivedAt: 0) }
    let after = storedEvents()
    switch answer.status {
    case 200:
        guard answer.duplicate || after - before == answer.storedEventCount else {
            fatalError("200 stored \(after - before) events, answered \(answer.storedEventCount)")
        }
        let again = blocking { await ingest.handle(body, receivedAt: 0) }
        guard again.status == 200, again.duplicate, storedEvents() == after else {
            fatalError("the same body twice was not a duplicate: \(again.body)")
        }
    case 400, 413, 415:
        guard after == before else { fatalError("status \(answer.status) stored \(after - before) events") }
    default:
        fatalError("unexpected status \(answer.status): \(answer.body)")
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
