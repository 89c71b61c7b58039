import Foundation
import Hummingbird
import Logging
import Metrics
import SpoorCollectorCore
import SpoorModel
import SpoorSystem
import SpoorWire
import Synchronization

/// How long a body may take to arrive: a fixed grace, and the time its bytes take at the slowest rate accepted.
struct BodyDeadline: Sendable, Hashable {
    /// The time any body gets.
    var grace: Duration
    /// The slowest rate accepted, in bytes per second.
    var minimumRate: Int

    /// The deadline for a body of `bytes`.
    func timeout(forBytes bytes: Int) -> Duration {
        grace + .milliseconds(Int64(clamping: bytes / max(minimumRate, 1)) * 1000)
    }
}

/// `POST /v1/batch`: who may send, the media type, the body read within its deadline and budget, then the request
/// core within a slot of the in-flight budget.
final class BatchHandler: Sendable {
    let ingest: Ingest
    let credentials: Credentials
    let admission: Admission
    let bodyDeadline: BodyDeadline
    let sink: NDJSONSink?
    let live: LiveFeed
    let logger: Logger

    private let eventsStored = Counter(label: "spoor_collector_events_stored_total")
    private let duplicates = Counter(label: "spoor_collector_duplicate_batches_total")
    private let bytesIn = Counter(label: "spoor_collector_bytes_in_total")
    private let storeLatency = Metrics.Timer(label: "spoor_collector_store_seconds")

    init(
        ingest: Ingest, credentials: Credentials, admission: Admission, bodyDeadline: BodyDeadline, sink: NDJSONSink?,
        live: LiveFeed, logger: Logger
    ) {
        self.ingest = ingest
        self.credentials = credentials
        self.admission = admission
        self.bodyDeadline = bodyDeadline
        self.sink = sink
        self.live = live
        self.logger = logger
    }

    func handle(_ request: Request, context: CollectorContext) async -> Response {
        let answer = await answer(request, context: context)
        Counter(label: "spoor_collector_requests_total", dimensions: [("status", String(answer.status))]).increment()
        logAnswer(answer, context: context)
        return jsonResponse(answer)
    }

    private func answer(_ request: Request, context: CollectorContext) async -> IngestResponse {
        let caller = credentials.caller(token: RequestHeaders.bearerToken(request.headers[.authorization]))
        if let refusal = credentials.policy.refusal(.ingest, caller: caller, fromLoopback: context.isFromLoopback) {
            return refusal
        }
        guard RequestHeaders.isBatchMediaType(request.headers[.contentType]) else {
            return .error(415, "unsupported_media_type", "Content-Type must be \(BatchFrame.mediaType)")
        }
        let limit = ingest.maxBody
        let expected: Int
        switch RequestHeaders.contentLength(request.headers[.contentLength]) {
        case .invalid:
            return .error(400, "bad_content_length", "Content-Length is not a number of bytes")
        case .bytes(let declared) where declared > limit:
            context.close(after: bodyDeadline.grace)
            return .error(413, "body_too_large", "Content-Length \(declared) is past the \(limit)-byte limit")
        case .bytes(let declared):
            expected = declared
        case .absent:
            expected = limit
        }
        let body: [UInt8]
        switch await readBody(request.body, limit: limit, deadline: bodyDeadline.timeout(forBytes: expected), context: context) {
        case .read(let bytes):
            body = bytes
        case .refused(let answer, let reserved):
            admission.release(bytes: reserved)
            if answer.status != 408 { context.close(after: bodyDeadline.grace) }
            return answer
        }
        // The body's bytes were reserved as they came; the batch now holds what its header says it may.
        let charge = ingest.memoryCharge(for: body)
        admission.release(bytes: body.count)
        guard admission.admit(bytes: charge) else {
            return .error(503, "overloaded", "the collector is handling as much as it may; retry later", retryAfter: 1)
        }
        defer { admission.finish(bytes: charge) }
        bytesIn.increment(by: body.count)
        // In flight from here until the answer: what a test waits for before it signals the process.
        logger.debug("batch received", metadata: ["bytes": "\(body.count)"])
        let start = ContinuousClock.now
        let answer = await ingest.handle(body, receivedAt: Int64(Date().timeIntervalSince1970 * 1000))
        if answer.status == 200 {
            storeLatency.recordInterval(since: start)
            if answer.duplicate {
                duplicates.increment()
            } else {
                eventsStored.increment(by: answer.storedEventCount)
                sink?.write(answer.storedEvents)
                if let batch = answer.storedBatch { live.record(batch) }
            }
        }
        return answer
    }

    private enum BodyRead: Sendable {
        case read([UInt8])
        /// Refused, with the bytes reserved so far.
        case refused(IngestResponse, reserved: Int)
    }

    /// Reads a body of at most `limit` bytes within `deadline`, reserving its bytes in the budget as they come.
    /// The deadline is a timer on the connection's event loop (no task per request): when it fires it stops reading
    /// the connection, which ends the read that waits on it, and the answer is 408.
    private func readBody(_ stream: RequestBody, limit: Int, deadline: Duration, context: CollectorContext) async -> BodyRead {
        let expired = Expiry()
        let timer = context.channel.eventLoop.scheduleTask(in: .nanoseconds(deadline.nanoseconds)) {
            expired.set()
            context.stopReading()
        }
        let reserved = ReservedBytes()
        let read = await Self.read(stream, limit: limit, admission: admission, reserved: reserved)
        timer.cancel()
        guard expired.isSet else { return read }
        return .refused(.error(408, "body_timeout", """
            the body did not arrive within \(deadline.components.seconds) s \
            (\(bodyDeadline.grace.components.seconds) s, then \(bodyDeadline.minimumRate) bytes a second)
            """), reserved: reserved.count)
    }

    private static func read(_ stream: RequestBody, limit: Int, admission: Admission, reserved: ReservedBytes) async -> BodyRead {
        var body: [UInt8] = []
        do {
            for try await buffer in stream {
                guard body.count + buffer.readableBytes <= limit else {
                    return .refused(.error(413, "body_too_large", "the body is past the \(limit)-byte limit"), reserved: reserved.count)
                }
                guard admission.reserve(bytes: buffer.readableBytes) else {
                    return .refused(.error(503, "overloaded", "the collector is holding as much as it may; retry later", retryAfter: 1),
                                    reserved: reserved.count)
                }
                reserved.add(buffer.readableBytes)
                body.append(contentsOf: buffer.readableBytesView)
            }
        } catch {
            var answer = IngestResponse.error(400, "body_read_failed", "the body could not be read")
            answer.logDetail = "\(error)"
            return .refused(answer, reserved: reserved.count)
        }
        return .read(body)
    }
}

/// Whether a body's deadline passed; set on the connection's event loop, read by the request's task.
private final class Expiry: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// The bytes a body read has reserved so far, read by the reader's caller when the read is cut at its deadline.
private final class ReservedBytes: Sendable {
    private let bytes = Locked(0)
    var count: Int { bytes.withLock { $0 } }
    func add(_ count: Int) { bytes.withLock { $0 += count } }
}

/// `--ndjson`: every newly stored event as one `spoor decode` JSON line.
final class NDJSONSink: Sendable {
    private let handle: Locked<FileHandle>

    init(path: String) throws {
        if path == "-" {
            handle = Locked(FileHandle.standardOutput)
        } else {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            guard let file = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileWriteNoPermission) }
            file.seekToEndOfFile()
            handle = Locked(file)
        }
    }

    func write(_ events: [Event]) {
        var text = ""
        for var event in events {
            // The same track id as the row's: derived from (anonymous id, sequence) when the event carries none.
            event.trackID = TrackID.of(event)
            text += EventJSON.encode(event) + "\n"
        }
        handle.withLock { $0.write(Data(text.utf8)) }
    }
}
