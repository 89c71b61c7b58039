import Foundation
import Logging
import SpoorSystem
import SpoorTestSupport
import SpoorWire
import Testing
import SpoorLog

/// Stands for a slow disk: the next write of records, once armed, says it has begun and then waits until the test
/// lets it go on. Every other write goes straight to the file.
final class WriteGate: Sendable {
    private let armed = Locked(false)
    /// Fulfilled when the held write has begun (its bytes not yet handed to the file).
    let entered = Promise<Void>()
    private let opened = Promise<Void>()

    /// Holds the next write until ``open()``.
    func arm() { armed.withLock { $0 = true } }

    /// Lets the held write go on.
    func open() { opened.fulfil(()) }

    var writer: EventLog.RecordWriter {
        { [self] fd, bytes, path throws(StorageError) in
            let hold = armed.withLock { armed in
                defer { armed = false }
                return armed
            }
            if hold {
                entered.fulfil(())
                // A bound, so a test that fails before opening the gate does not leave the thread waiting for good.
                _ = opened.wait(timeout: testBound)
            }
            try FileIO.writeAll(fd, bytes, path: path)
        }
    }
}

/// The log plans an append under its state lock, writes outside it and commits after: readers, seals and the
/// inspection of the outbox never wait behind a write the disk is slow to take, and what they see is consistent.
@Suite struct SlowWriteTests {
    let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func open(_ directory: TemporaryDirectory, gate: WriteGate, _ configuration: EventLog.Configuration = .init(durability: .none)) throws -> EventLog {
        try EventLog(directory: directory.url, configuration: configuration, logger: quiet, writeRecords: gate.writer)
    }

    /// Starts `body` on a thread of its own (it may block behind the held write); the promise gets what it returns.
    func started<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Promise<Value> {
        let returned = Promise<Value>()
        Thread.detachNewThread { returned.fulfil(body()) }
        return returned
    }

    /// Starts `append` on a thread of its own (it blocks at the gate); the promise is fulfilled when it returns.
    func appendHeld(_ log: EventLog, _ gate: WriteGate, _ range: Range<Int>) async -> Promise<Void>? {
        let buffer = Fixtures.buffer(range)
        gate.arm()
        let returned = started { log.append(buffer) }
        guard await finished({ await gate.entered.value }) != nil else {
            Issue.record("the held write never began")
            gate.open()
            return nil
        }
        return returned
    }

    @Test func readersDoNotWaitBehindASlowWrite() async throws {
        let directory = TemporaryDirectory()
        let gate = WriteGate()
        let log = try open(directory, gate: gate)
        log.append(Fixtures.buffer(0..<5))
        let bytesBefore = log.byteCount
        guard let appended = await appendHeld(log, gate, 5..<10) else { return }
        defer { gate.open() }

        // With the write held, the readers answer at once with what is committed: the five records before it.
        let seen = await onThreadOfItsOwn(within: testBound) {
            (log.recordCount, log.byteCount, log.counters.dropped, log.pendingBatches().count, Fixtures.sequences(log))
        }
        let (records, bytes, dropped, batches, sequences) = try #require(seen, "a reader waited behind the write")
        #expect(records == 5 && bytes == bytesBefore && dropped == 0 && batches == 0)
        #expect(sequences == Array(0..<5))

        gate.open()
        #expect(await finished({ await appended.value }) != nil)
        #expect(log.recordCount == 10)
        #expect(Fixtures.sequences(log) == Array(0..<10))
    }

    /// A seal during a held write takes only what is committed, and its garbage collection leaves alone the
    /// segment the write goes to: the held records are neither sealed early nor lost with a deleted file.
    @Test(arguments: [false, true]) func aSealDuringAHeldWriteTakesOnlyCommittedRecords(startsNewSegment: Bool) async throws {
        let directory = TemporaryDirectory()
        let gate = WriteGate()
        // Small segments: with `startsNewSegment`, the held write does not fit the first one and starts the next.
        let segmentBytes = startsNewSegment ? 1024 : 1 << 20
        let log = try open(directory, gate: gate, .init(durability: .none, segmentBytes: segmentBytes))
        log.append(Fixtures.buffer(0..<3))
        guard let appended = await appendHeld(log, gate, 3..<6) else { return }
        defer { gate.open() }

        let sealed = await onThreadOfItsOwn(within: testBound) { try? log.seal() }
        let outcome = try #require(sealed, "the seal waited behind the write")
        let batch = try #require(outcome)
        #expect(batch.recordCount == 3)
        let frame = try FrameDecoder().decode(log.frame(of: batch.id))
        #expect(try Fixtures.sequences(inBatch: frame.payload) == Array(0..<3))

        gate.open()
        #expect(await finished({ await appended.value }) != nil)
        #expect(Fixtures.sequences(log) == Array(3..<6))
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("seg-") }
        #expect(segments.count == 1, "the emptied segment is deleted, the written one kept: \(segments)")
        log.close()

        let reopened = try EventLog(directory: directory.url, configuration: .init(segmentBytes: segmentBytes), logger: quiet)
        #expect(Fixtures.sequences(reopened) == Array(3..<6))
        #expect(reopened.pendingBatches().map(\.id) == [batch.id])
        reopened.close()
    }

    /// A batch released while a held write is starting a new segment (the old one now wholly consumed) must not
    /// save a head past that segment: a crash before the next save would have recovery delete it as consumed.
    @Test func aReleaseDuringAHeldWriteToANewSegmentKeepsItThroughACrash() async throws {
        let directory = TemporaryDirectory()
        let gate = WriteGate()
        let configuration = EventLog.Configuration(durability: .none, segmentBytes: 1024)
        let log = try open(directory, gate: gate, configuration)
        log.append(Fixtures.buffer(0..<3))
        guard let appended = await appendHeld(log, gate, 3..<6) else { return }
        defer { gate.open() }

        let released = await onThreadOfItsOwn(within: testBound) { () -> Bool in
            guard let batch = try? log.seal() else { return false }
            return (try? log.release(batch.id)) != nil
        }
        #expect(released == true, "the seal and release ran beside the held write")
        gate.open()
        #expect(await finished({ await appended.value }) != nil)

        // The directory as a crash right now would leave it: no close, no later save of the state file.
        let crashed = try snapshot(directory)
        let reopened = try EventLog(directory: crashed.url, configuration: .init(segmentBytes: 1024), logger: quiet)
        #expect(Fixtures.sequences(reopened) == Array(3..<6))
        reopened.close()
        log.close()
    }

    /// A close while an append is writing waits for it: the append's records are on disk, not dropped.
    @Test func aCloseDuringAHeldWriteKeepsTheAppend() async throws {
        let directory = TemporaryDirectory()
        let gate = WriteGate()
        let log = try open(directory, gate: gate)
        log.append(Fixtures.buffer(0..<2))
        guard let appended = await appendHeld(log, gate, 2..<4) else { return }
        let closed = started { log.close() }
        gate.open()
        #expect(await finished({ await appended.value }) != nil)
        #expect(await finished({ await closed.value }) != nil)
        #expect(log.counters.dropped == 0)
        let reopened = try EventLog(directory: directory.url, logger: quiet)
        #expect(Fixtures.sequences(reopened) == Array(0..<4))
        reopened.close()
    }

    /// An erase while an append is writing comes after it: it removes the append's records too.
    @Test func anEraseDuringAHeldWriteErasesTheAppendToo() async throws {
        let directory = TemporaryDirectory()
        let gate = WriteGate()
        let log = try open(directory, gate: gate)
        log.append(Fixtures.buffer(0..<2))
        guard let appended = await appendHeld(log, gate, 2..<4) else { return }
        let erased = started { (try? log.eraseAll().records) ?? -1 }
        gate.open()
        #expect(await finished({ await appended.value }) != nil)
        #expect(await finished({ await erased.value }) == 4)
        #expect(log.recordCount == 0 && Fixtures.sequences(log).isEmpty)
        log.append(Fixtures.buffer(4..<5))
        log.close()
        let reopened = try EventLog(directory: directory.url, logger: quiet)
        #expect(Fixtures.sequences(reopened) == [4])
        reopened.close()
    }

    /// The caps are applied when a held write commits, to the log as it is then: records a seal took meanwhile
    /// are not dropped again, and the counts stay whole.
    @Test func capsAfterAHeldWriteCountWhatASealTookMeanwhile() async throws {
        let directory = TemporaryDirectory()
        let gate = WriteGate()
        let log = try open(directory, gate: gate, .init(maxRecords: 6, durability: .none))
        log.append(Fixtures.buffer(0..<6))
        guard let appended = await appendHeld(log, gate, 6..<9) else { return }
        defer { gate.open() }
        let sealed = await onThreadOfItsOwn(within: testBound) { try? log.seal(maxRecords: 2) }
        let outcome = try #require(sealed, "the seal waited behind the write")
        #expect(outcome?.recordCount == 2)
        gate.open()
        #expect(await finished({ await appended.value }) != nil)
        // Six records fit; the held three push out the oldest live ones (2, 3, 4), never the sealed 0 and 1.
        #expect(Fixtures.sequences(log) == Array(3..<9))
        #expect(log.recordCount == 6 && log.counters.dropped == 1)
    }

    /// Appends that rotate segments and push out the oldest records race seals, releases and readers: every
    /// event appended is live, sealed or counted as dropped, exactly once, and nothing reads as corrupt.
    @Test func capsSealsAndReadersRacingAppendsKeepTheCountsWhole() async throws {
        let directory = TemporaryDirectory()
        let configuration = EventLog.Configuration(maxRecords: 400, durability: .none, segmentBytes: 8 << 10, maxPendingBatches: 10_000)
        let log = try EventLog(directory: directory.url, configuration: configuration, logger: quiet)
        let sealed = await Fixtures.appendConcurrently(to: log, writers: 2, alongside: [
            {
                var sealed: [Int] = []
                for round in 0..<200 {
                    guard let batch = try? log.seal(maxRecords: 37), let frame = try? FrameDecoder().decode(log.frame(of: batch.id)) else { continue }
                    sealed += (try? Fixtures.sequences(inBatch: frame.payload)) ?? []
                    if round % 2 == 0 { try? log.release(batch.id) }
                }
                return sealed
            },
            {
                for _ in 0..<50 {
                    let live = Fixtures.sequences(log)
                    if Set(live).count != live.count { Issue.record("a reader saw a record twice") }
                }
                return []
            },
        ])
        let live = Fixtures.sequences(log)
        let counters = log.counters
        #expect(counters.corrupt == 0)
        #expect(log.recordCount == live.count)
        #expect(Set(live + sealed).count == live.count + sealed.count, "no event is both live and sealed, or sealed twice")
        #expect(UInt64(live.count + sealed.count) + counters.dropped == 6000)
        log.close()
        let reopened = try EventLog(directory: directory.url, configuration: configuration, logger: quiet)
        #expect(Fixtures.sequences(reopened) == live)
        reopened.close()
    }

    /// A log handler that calls back into the log (here: appends when told the log is full) finds none of the
    /// log's locks held: messages are logged after they are released.
    @Test func aLogHandlerMayCallBackIntoTheLog() async throws {
        let directory = TemporaryDirectory()
        let target = Locked<EventLog?>(nil)
        let answered = Locked(false)
        let logger = Logger(label: "test") { _ in
            CallbackHandler { message in
                guard message.contains("event log full"), let log = target.withLock({ $0 }) else { return }
                let first = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { log.append(Fixtures.buffer(1000..<1001)) }
            }
        }
        let log = try EventLog(directory: directory.url, configuration: .init(maxRecords: 5, durability: .none), logger: logger)
        target.withLock { $0 = log }
        let returned = await onThreadOfItsOwn(within: testBound) {
            log.append(Fixtures.buffer(0..<8))
            return log.recordCount
        }
        #expect(returned == 5, "the append returned, with the log at its cap")
        #expect(answered.withLock { $0 })
        #expect(Fixtures.sequences(log).last == 1000)
        target.withLock { $0 = nil }
        log.close()
    }
}

/// Calls `body` with every message's text.
struct CallbackHandler: LogHandler {
    let body: @Sendable (String) -> Void
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(_ body: @escaping @Sendable (String) -> Void) { self.body = body }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { body("\(event.message)") }
}
