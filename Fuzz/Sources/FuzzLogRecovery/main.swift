// Fuzzes the event log's recovery with arbitrary bytes as a segment file. The first byte picks
// whether a valid segment header is put in front (so the fuzzer spends its time on records) or
// the bytes are the whole file. Recovery must never crash, and must be idempotent: a second
// recovery finds the same records and no new damage. A record appended after recovery must be
// read back, and sealing everything must give frames that decode.
import CFuzzDriver
import Foundation
import Logging
import SpoorLog
import SpoorWire

let quiet = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
let directory = URL(fileURLWithPath: base).appendingPathComponent("spoor-fuzz-recovery-\(getpid())")
let configuration = EventLog.Configuration(durability: .none, maxPendingBatches: 1000)
/// A valid segment header for segment 1: magic, version 2, reserved, id 1.
let header: [UInt8] = Array("SPLG".utf8) + [2, 0, 0, 0] + [1, 0, 0, 0, 0, 0, 0, 0]
/// One batch entry for the record appended after recovery: an Event with only `event = "z"`.
let entry: [UInt8] = [0x0A, 0x03, 0x0A, 0x01, 0x7A]

func records(_ log: EventLog) -> [[UInt8]] {
    var out: [[UInt8]] = []
    log.forEachRecord { out.append($0) }
    return out
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    let file = (input.first.map { $0 & 1 == 0 } ?? true) ? header + input.dropFirst() : Array(input.dropFirst())
    try? FileManager.default.removeItem(at: directory)
    try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    _ = FileManager.default.createFile(atPath: directory.path + "/seg-0000000000000001.log", contents: Data(file))

    let first: [[UInt8]]
    let counters: LogCounters
    do {
        let log = try EventLog(directory: directory, configuration: configuration, logger: quiet)
        first = records(log)
        counters = log.counters
        guard log.recordCount == first.count else { fatalError("recordCount \(log.recordCount), read \(first.count)") }
        log.close()
    } catch {
        fatalError("opening a log over arbitrary bytes threw \(error)")
    }
    do {
        let log = try EventLog(directory: directory, configuration: configuration, logger: quiet)
        let second = records(log)
        guard second == first else { fatalError("a second recovery read \(second.count) records, the first \(first.count)") }
        let again = log.counters
        guard again.corrupt == counters.corrupt, again.tornTails == counters.tornTails, again.quarantined == counters.quarantined else {
            fatalError("a second recovery found new damage: \(counters) then \(again)")
        }
        var buffer = RecordBuffer()
        buffer.append(entry: entry)
        log.append(buffer)
        // Read back as itself, behind the context record in effect (which it does not use) if there is one.
        let after = records(log)
        guard after.count == first.count + 1, after.last!.suffix(entry.count).elementsEqual(entry), after.dropLast() == first[...] else {
            fatalError("an appended record was not read back")
        }
        var sealed = 0
        while let batch = try log.seal(maxRecords: 50, codec: .none) {
            let frame = try FrameDecoder().decode(log.frame(of: batch.id))
            sealed += Int(frame.header.recordCount)
        }
        guard sealed == first.count + 1 else { fatalError("sealed \(sealed) records of \(first.count + 1)") }
        log.close()
    } catch {
        fatalError("a recovered log failed: \(error)")
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
