import Foundation
import Hummingbird
import Logging
import Metrics
import SpoorCollectorCore
import SpoorModel
import SpoorWire
import Synchronization

/// `POST /v1/batch`: auth, in-flight cap, bounded body read, then the request core.
final class BatchHandler: Sendable {
    let ingest: Ingest
    let tokens: Set<String>
    let maxInFlight: Int
    let sink: NDJSONSink?
    let live: LiveFeed
    let logger: Logger
    private let inFlight = Mutex<Int>(0)

    private let eventsStored = Counter(label: "spoor_collector_events_stored_total")
    private let duplicates = Counter(label: "spoor_collector_duplicate_batches_total")
    private let bytesIn = Counter(label: "spoor_collector_bytes_in_total")
    private let storeLatency = Metrics.Timer(label: "spoor_collector_store_seconds")
    private let inFlightGauge = Gauge(label: "spoor_collector_batches_in_flight")

    init(ingest: Ingest, tokens: Set<String>, maxInFlight: Int, sink: NDJSONSink?, live: LiveFeed, logger: Logger) {
        self.ingest = ingest
        self.tokens = tokens
        self.maxInFlight = maxInFlight
        self.sink = sink
        self.live = live
        self.logger = logger
    }

    func handle(_ request: Request) async -> Response {
        let answer = await answer(request)
        Counter(label: "spoor_collector_requests_total", dimensions: [("status", String(answer.status))]).increment()
        return jsonResponse(answer)
    }

    private func answer(_ request: Request) async -> IngestResponse {
        guard TokenCheck.admits(request, tokens: tokens) else { return TokenCheck.refusal }
        let limit = ingest.maxBody
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            return .error(413, "body_too_large", "Content-Length \(declared) is past the \(limit)-byte limit")
        }
        // The gauge is set under the lock, so its last value is the count's.
        let admitted = inFlight.withLock { count in
            guard count < maxInFlight else { return false }
            count += 1
            inFlightGauge.record(count)
            return true
        }
        guard admitted else {
            return .error(503, "overloaded", "more than \(maxInFlight) batches in flight", retryAfter: 1)
        }
        defer {
            inFlight.withLock { count in
                count -= 1
                inFlightGauge.record(count)
            }
        }
        // Count while reading: a body without (or lying about) Content-Length stops at the limit.
        var body: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard body.count + buffer.readableBytes <= limit else {
                    return .error(413, "body_too_large", "the body is past the \(limit)-byte limit")
                }
                body.append(contentsOf: buffer.readableBytesView)
            }
        } catch {
            return .error(400, "body_read_failed", "\(error)")
        }
        bytesIn.increment(by: body.count)
        // In flight from here until the answer: what a test waits for before it signals the process.
        logger.debug("batch received", metadata: ["bytes": "\(body.count)"])
        let start = ContinuousClock.now
        let answer = await ingest.handle(body, receivedAt: Int64(Date().timeIntervalSince1970 * 1000))
        if answer.status == 200 {
            let elapsed = (ContinuousClock.now - start).components
            storeLatency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
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
}

/// `--ndjson`: every newly stored event as one `spoor decode` JSON line.
final class NDJSONSink: Sendable {
    private let handle: Mutex<FileHandle>

    init(path: String) throws {
        if path == "-" {
            handle = Mutex(FileHandle.standardOutput)
        } else {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            guard let file = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileWriteNoPermission) }
            file.seekToEndOfFile()
            handle = Mutex(file)
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
