// A helper process for the transport tests: it does storage work until it is
// killed (crash test), fills a disk under a file-size limit, or holds a large
// backlog while its memory is measured. It reports on stdout, one line per fact.
import Foundation
import Logging
import SpoorModel
import SpoorWire
import SpoorLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one line straight to fd 1, so nothing sits in a buffer when the process is killed.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count {
            let n = write(1, raw.baseAddress! + done, raw.count - done)
            if n <= 0 { return }
            done += n
        }
    }
}

#if canImport(Glibc)
let fileSizeLimit = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
#else
let fileSizeLimit = RLIMIT_FSIZE
#endif


func event(_ sequence: UInt64) -> Event {
    Event(
        name: "ViewProduct", time: 1_700_000_000_000 + Int64(sequence), trackID: sequence &* 0x9E37_79B9_7F4A_7C15,
        sequence: sequence, distinctID: "user-\(sequence % 7)", anonymousID: "5F2C9A1E-0B7D-4C3A-9E61-2D8F4B7A1C30",
        lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.4.1"),
        properties: [
            "product_id": .string("sku-\(sequence % 1000)"), "price": .double(19.99), "quantity": .int(Int64(sequence % 5 + 1)),
            "in_stock": .bool(true), "tags": .list(["sale", "summer"]), "$screen_name": .string("ProductDetailViewController"),
            "$os": .string("Linux"), "$os_version": .string("6.8"), "$model": .string("x86_64"), "$network_type": .string("WIFI"),
        ],
        sessionID: "session-\(sequence / 100)"
    )
}

let quiet = Logger(label: "child") { _ in SwiftLogNoOpLogHandler() }

/// Appends events the two ways the tracker writes them: in two blocks of 100 sequence numbers out of three,
/// each event as its own fields extending a context record (the block's ids, lib, session and shared
/// properties, time and sequence as offsets from the block's), and in the third as whole events. Either way
/// an event decodes to exactly `event(sequence)`.
struct EventWriter {
    let encoder = EventEncoder()
    /// The block whose context record was appended last by this process.
    var contextBlock: UInt64?
    static let shared: Set<String> = ["$os", "$os_version", "$model", "$network_type"]

    mutating func append(_ sequence: UInt64, to buffer: inout RecordBuffer) throws {
        let whole = event(sequence)
        let block = sequence / 100
        guard block % 3 != 2 else { return try buffer.append(whole, using: encoder) }
        let base = block * 100
        if contextBlock != block {
            let context = Event(
                name: "", type: .unrecognized(0), time: 1_700_000_000_000 + Int64(base), sequence: base,
                distinctID: "", anonymousID: whole.anonymousID,
                lib: LibInfo(lib: whole.lib.lib, libVersion: whole.lib.libVersion, method: .unspecified, appVersion: whole.lib.appVersion),
                properties: whole.properties.filter { Self.shared.contains($0.key) }, sessionID: whole.sessionID)
            try buffer.appendContext(context, suffix: [], using: encoder)
            contextBlock = block
        }
        var own = whole
        own.time = 0
        own.sequence = 0
        own.anonymousID = ""
        own.lib = LibInfo(lib: "", libVersion: "", method: whole.lib.method)
        own.properties = whole.properties.filter { !Self.shared.contains($0.key) }
        own.sessionID = nil
        // context = 1, then time_offset and sequence_offset (both sequence - base).
        var suffix: [UInt8] = []
        let offset = Int64(sequence - base)
        ContextRecord.appendReference(timeOffset: offset, sequenceOffset: offset, to: &suffix)
        try buffer.append(own, suffix: suffix, using: encoder)
    }
}

/// The writers' common step: appends a group of 1 to 40 events numbered from `next` (none from `end` on) in one
/// append, and one time in four syncs the log and says the last number synced.
func appendGroup(
    to log: EventLog, writer: inout EventWriter, buffer: inout RecordBuffer, next: inout UInt64,
    random: inout SplitMix64, end: UInt64 = .max
) throws {
    buffer.removeAll(keepingCapacity: true)
    for _ in 0..<Int.random(in: 1...40, using: &random) where next < end {
        try writer.append(next, to: &buffer)
        next += 1
    }
    log.append(buffer)
    if Int.random(in: 0..<4, using: &random) == 0 {
        try log.sync()
        say("synced \(next - 1)")
    }
}

/// Appends, syncs, seals and releases at random until killed.
func crash(directory: URL, start: UInt64, seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let durability: Durability = [.none, .always, .batched(interval: .milliseconds(5))][Int(seed % 3)]
    let configuration = EventLog.Configuration(
        maxBytes: 1 << 30, maxRecords: 1_000_000, durability: durability, segmentBytes: 64 << 10, maxPendingBatches: 1000
    )
    var log = try EventLog(directory: directory, configuration: configuration, logger: quiet)
    var writer = EventWriter()
    let decoder = EventDecoder()
    var buffer = RecordBuffer()
    var next = start
    say("ready")
    while true {
        try appendGroup(to: log, writer: &writer, buffer: &buffer, next: &next, random: &random)
        if Int.random(in: 0..<10, using: &random) == 0 {
            // Every codec this build has (on Linux all three, so the seeded sequence is the same as ever).
            let codec = Codec.allCases.filter(\.isAvailable).randomElement(using: &random)!
            try log.seal(maxRecords: Int.random(in: 1...150, using: &random), codec: codec)
        }
        if Int.random(in: 0..<12, using: &random) == 0, let oldest = log.pendingBatches().first {
            try release(oldest, from: log, decoder: decoder)
        }
        // Now and then empty the log completely (no segment file is left) ...
        if Int.random(in: 0..<60, using: &random) == 0 {
            while try log.seal(maxRecords: 150) != nil {}
            for batch in log.pendingBatches() { try release(batch, from: log, decoder: decoder) }
        }
        // ... or close it and open it again, so kills also land in recoveries.
        if Int.random(in: 0..<40, using: &random) == 0 {
            log.close()
            log = try EventLog(directory: directory, configuration: configuration, logger: quiet)
        }
    }
}

/// Releases a batch, saying which events it held before and after.
func release(_ batch: SealedBatch, from log: EventLog, decoder: EventDecoder) throws {
    let frame = try FrameDecoder().decode(log.frame(of: batch.id))
    let sequences = try decoder.decodeBatch(frame.payload).map(\.sequence)
    say("releasing \(sequences.min()!) \(sequences.max()!)")
    try log.release(batch.id)
    say("released \(sequences.min()!) \(sequences.max()!)")
}

/// Appends under a small file-size limit, then lifts it and syncs.
func diskFull(directory: URL, count: Int) throws {
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit()
    getrlimit(fileSizeLimit, &limit)
    let original = limit
    limit.rlim_cur = 64 << 10
    setrlimit(fileSizeLimit, &limit)

    let log = try EventLog(
        directory: directory,
        configuration: .init(durability: .none, segmentBytes: 1 << 20, retryInterval: .seconds(3600)),
        logger: Logger(label: "child") { _ in StreamLogHandler.standardError(label: "child") }
    )
    let encoder = EventEncoder()
    var buffer = RecordBuffer()
    for start in stride(from: 0, to: count, by: 10) {
        buffer.removeAll(keepingCapacity: true)
        for sequence in start..<min(start + 10, count) { try buffer.append(event(UInt64(sequence)), using: encoder) }
        log.append(buffer)
    }
    say("full writeErrors=\(log.counters.writeErrors) records=\(log.recordCount)")
    do {
        try log.sync()
        say("sync-while-full ok")
    } catch {
        say("sync-while-full \(error.kind.rawValue)")
    }
    var raised = original
    setrlimit(fileSizeLimit, &raised)
    try log.sync()
    say("sync-after ok records=\(log.recordCount)")
    log.close()
}

/// The peak resident set size in KiB (VmHWM).
func peakRSS() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
    }
    return -1
}

/// Fills a log with `count` events while offline, reopens it and reads it all, reporting peak memory.
func backlog(directory: URL, count: Int) throws {
    let configuration = EventLog.Configuration(maxBytes: 1 << 30, maxRecords: count, durability: .none)
    do {
        let log = try EventLog(directory: directory, configuration: configuration, logger: quiet)
        let encoder = EventEncoder()
        var entry: [UInt8] = []
        var buffer = RecordBuffer()
        for start in stride(from: 0, to: count, by: 100) {
            buffer.removeAll(keepingCapacity: true)
            for sequence in start..<min(start + 100, count) {
                entry.removeAll(keepingCapacity: true)
                try encoder.appendBatchEntry(event(UInt64(sequence)), to: &entry)
                buffer.append(entry: entry)
            }
            log.append(buffer)
        }
        say("appended records=\(log.recordCount) bytes=\(log.byteCount) peakKiB=\(peakRSS())")
        log.close()
    }
    let log = try EventLog(directory: directory, configuration: configuration, logger: quiet)
    var seen = 0
    log.forEachRecord { _ in seen += 1 }
    var sealed = 0
    for _ in 0..<10 {
        if let batch = try log.seal() { sealed += batch.recordCount }
    }
    say("reopened records=\(log.recordCount) read=\(seen) sealed=\(sealed) peakKiB=\(peakRSS())")
}

/// One process of several sharing a storage directory: appends to a log of its own, syncs, seals and claims other
/// processes' batches at random until killed. Says `synced LAST` once everything up to LAST is durable. With `limit`,
/// stops after that many events, synced, and waits to be killed.
func sharedWriter(storage: URL, start: UInt64, seed: UInt64, limit: UInt64? = nil) throws {
    var random = SplitMix64(seed: seed)
    let configuration = EventLog.Configuration(
        maxBytes: 1 << 30, maxRecords: 1_000_000, durability: .batched(interval: .milliseconds(5)), segmentBytes: 64 << 10,
        maxPendingBatches: 1000
    )
    let log = try EventLog.openShared(storageDirectory: storage, configuration: configuration, logger: quiet, claimAfter: .zero)
    var writer = EventWriter()
    var buffer = RecordBuffer()
    var next = start
    say("ready")
    while true {
        if let limit, next - start >= limit {
            try log.sync()
            say("synced \(next - 1)")
            while true { pause() }
        }
        try appendGroup(
            to: log, writer: &writer, buffer: &buffer, next: &next, random: &random, end: limit.map { start + $0 } ?? .max)
        if Int.random(in: 0..<8, using: &random) == 0 {
            // Nothing uploads here: a writer the test is slow to kill (a loaded machine) fills its outbox, and then
            // records wait in the log, as they would for an uploader.
            let most = Int.random(in: 1...150, using: &random)
            do {
                try log.seal(maxRecords: most)
            } catch {
                if error.kind != .outboxFull { throw error }
            }
        }
        if Int.random(in: 0..<8, using: &random) == 0 { log.claimFromOthers(limit: 4) }
    }
}

/// A stand-in for the tracker's lifecycle recovery: a log whose `crash.marker` holds a decimal number N stands for three
/// events, numbered N, N + 1 and N + 2 (the same in every adopter, as the tracker's are made from the same files).
let fakeLifecycle = LifecycleRecovery { log in
    let marker = log.directory.appendingPathComponent(StorageLayout.crashMarkerName).path
    guard let bytes = try? FileIO.readFile(marker, limit: 64),
          let first = UInt64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    else { return nil }
    var buffer = RecordBuffer()
    for sequence in first..<first + 3 { try? buffer.append(event(sequence), using: EventEncoder()) }
    return buffer
}

/// Opens a shared log over `storage`, adopting the logs of processes that are gone, claims every batch, closes it and
/// opens another (whose adoption removes the emptied logs); SIGKILLs itself right after step number `stop` of the
/// adoptions of the log named `target` (counted from 1). Says `adopted` if it got through all of them. Lifecycle files
/// are recovered with ``fakeLifecycle``.
func adoptAndStop(storage: URL, target: String, stop: Int) throws {
    var steps = 0
    let hook: (SharedLogArea.AdoptionStep, String) -> Void = { step, path in
        guard path.hasSuffix("/" + target) else { return }
        steps += 1
        if steps == stop {
            say("stopping after step \(steps): \(step)")
            kill(getpid(), SIGKILL)
        }
    }
    let configuration = EventLog.Configuration(durability: .always, maxPendingBatches: 10_000)
    let log = try EventLog.openShared(storageDirectory: storage, configuration: configuration, logger: quiet,
                                      claimAfter: .zero, lifecycle: fakeLifecycle, afterAdoptionStep: hook)
    while log.claimFromOthers(limit: 10_000) > 0 {}
    log.close()
    let again = try EventLog.openShared(storageDirectory: storage, configuration: configuration, logger: quiet,
                                        claimAfter: .zero, lifecycle: fakeLifecycle, afterAdoptionStep: hook)
    again.close()
    say("adopted steps=\(steps)")
}

let arguments = CommandLine.arguments
do {
    switch arguments.count > 2 ? arguments[1] : "" {
    case "crash" where arguments.count == 5:
        try crash(directory: URL(fileURLWithPath: arguments[2]), start: UInt64(arguments[3])!, seed: UInt64(arguments[4])!)
    case "disk-full" where arguments.count == 4:
        try diskFull(directory: URL(fileURLWithPath: arguments[2]), count: Int(arguments[3])!)
    case "shared-writer" where arguments.count == 5 || arguments.count == 6:
        try sharedWriter(storage: URL(fileURLWithPath: arguments[2]), start: UInt64(arguments[3])!, seed: UInt64(arguments[4])!,
                         limit: arguments.count == 6 ? UInt64(arguments[5])! : nil)
    case "adopt-stop" where arguments.count == 5:
        try adoptAndStop(storage: URL(fileURLWithPath: arguments[2]), target: arguments[3], stop: Int(arguments[4])!)
    case "backlog" where arguments.count == 4:
        try backlog(directory: URL(fileURLWithPath: arguments[2]), count: Int(arguments[3])!)
    default:
        FileHandle.standardError.write(Data("usage: SpoorCrashChild crash DIR START SEED | shared-writer STORAGE START SEED [LIMIT] | adopt-stop STORAGE LOG STEP | disk-full DIR COUNT | backlog DIR COUNT\n".utf8))
        exit(2)
    }
} catch {
    // On both streams: a test that stopped reading the output still shows the reason with the exit status.
    say("error \(error)")
    FileHandle.standardError.write(Data("error \(error)\n".utf8))
    exit(1)
}
