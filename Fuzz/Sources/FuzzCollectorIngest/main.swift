// Fuzzes the collector's request path (body → frame → events → rows → store) against an in-memory
// SQLite store. Any body must get a status the API defines; a 200 stores exactly the batch's events
// (once: the same body again is a duplicate), and any other status stores nothing. Rows written from the
// decoder's views must equal rows built from decoded `Event`s, and both paths must give the same answers.
import CFuzzDriver
import Foundation
import SpoorCollectorCore
import SpoorCollectorSQLite

let store = try! SQLiteStore(path: nil)
let ingest = Ingest(limits: IngestLimits(maxBody: 1 << 20, maxDecompressed: 1 << 20), store: store)
let eventPath = Ingest(limits: ingest.limits, store: store, keepsEvents: true)

/// Runs async work to completion from the fuzzer's synchronous callback.
func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: T?
    Task { result = await work(); done.signal() }
    done.wait()
    return result!
}

func storedEvents() -> Int { (try! store.countsByName()).reduce(0) { $0 + $1.count } }

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let body = size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    switch (ingest.decode(body, receivedAt: 0), eventPath.decode(body, receivedAt: 0)) {
    case (.success(let fast), .success(let reference)):
        guard fast.0.events == reference.0.events else { fatalError("rows from views differ from rows from events") }
    case (.failure(let fast), .failure(let reference)):
        guard fast == reference else { fatalError("the two paths answer differently: \(fast.body) / \(reference.body)") }
    default:
        fatalError("one path decoded what the other refused")
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
