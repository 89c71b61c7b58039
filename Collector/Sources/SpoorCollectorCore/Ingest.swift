public import SpoorModel
import SpoorWire

/// The collector's limits on one request.
public struct IngestLimits: Sendable, Hashable {
    /// The largest request body accepted (413 past it).
    public var maxBody: Int
    /// The largest decompressed payload accepted, declared or actual (413 past it).
    public var maxDecompressed: Int
    /// The most bytes of row text one batch may become (413 past it): what the store is sent and the live feed
    /// copies. A batch may also not become more than ``rowExpansion`` times its payload (plus 64 KiB), so what a
    /// request may hold is known from its frame's header before anything is decompressed.
    public var maxRowBytes: Int

    /// The largest `maxDecompressed` a collector may be given: with ``EventRows/maxTextBytes`` it keeps every row
    /// offset within `Int32`.
    public static let maxDecompressedLimit = 128 << 20
    /// How many times its payload a batch's row text may be: realistic events are 1–2 times (JSON escapes and the
    /// columns' names), a payload of near-empty events far more.
    public static let rowExpansion = 16

    /// Creates limits; the defaults are 4 MiB of body, 4 MiB decompressed (eight times the tracker's largest
    /// batch) and 16 MiB of row text.
    public init(maxBody: Int = 4 << 20, maxDecompressed: Int = 4 << 20, maxRowBytes: Int = 16 << 20) {
        self.maxBody = maxBody
        self.maxDecompressed = min(maxDecompressed, Self.maxDecompressedLimit)
        self.maxRowBytes = min(maxRowBytes, EventRows.maxTextBytes)
    }

    /// The most row text a payload of `payloadBytes` may become.
    public func rowBytes(forPayload payloadBytes: Int) -> Int {
        min(maxRowBytes, Self.rowExpansion * min(payloadBytes, maxDecompressed) + (64 << 10))
    }
}

/// The answer to one request: an HTTP status and a JSON body.
public struct IngestResponse: Error, Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The JSON body.
    public var body: String
    /// Seconds for `Retry-After`, on 503.
    public var retryAfter: Int?
    /// How many events this request newly stored.
    public var storedEventCount = 0
    /// Those events, when the ingest keeps them (``Ingest/keepsEvents``, for `--ndjson`).
    public var storedEvents: [Event] = []
    /// The batch was stored before and nothing was written.
    public var duplicate = false
    /// The batch this request newly stored, for the live events feed; nil when nothing was stored.
    public var storedBatch: BatchRecord?
    /// For the server's log only, never sent: the full error behind a fixed answer (a store's own message).
    public var logDetail: String?

    /// Creates an answer.
    public init(status: Int, body: String, retryAfter: Int? = nil, storedEventCount: Int = 0, storedEvents: [Event] = [],
                duplicate: Bool = false) {
        self.status = status
        self.body = body
        self.retryAfter = retryAfter
        self.storedEventCount = storedEventCount
        self.storedEvents = storedEvents
        self.duplicate = duplicate
    }

    /// An error answer `{"error": reason, "detail": detail}`.
    public static func error(_ status: Int, _ reason: String, _ detail: String, retryAfter: Int? = nil) -> Self {
        let body = JSONValue.object([.init("error", .string(reason)), .init("detail", .string(detail))]).serialized
        return Self(status: status, body: body, retryAfter: retryAfter)
    }
}

/// The request path without HTTP: body → frame → events → rows → store, and the status it earns.
public struct Ingest: Sendable {
    /// The limits enforced.
    public let limits: IngestLimits
    /// Where batches go.
    public let store: any BatchStore
    /// Whether answers carry the stored ``Event``s (for `--ndjson`); without it rows are written straight from
    /// the decoder's views, with no `Event` per event: about 1.6× faster to decode.
    public let keepsEvents: Bool
    /// Whether rows are written even for a store that keeps frames, for the live events page, which shows what
    /// this collector stored whatever its store.
    public let keepsRows: Bool

    /// The largest body accepted: the limit, or less when the store takes no larger frame.
    public var maxBody: Int { min(limits.maxBody, store.maxFrameBytes) }

    /// Creates the request core over a store.
    public init(limits: IngestLimits = IngestLimits(), store: any BatchStore, keepsEvents: Bool = false, keepsRows: Bool = false) {
        self.limits = limits
        self.store = store
        self.keepsEvents = keepsEvents
        self.keepsRows = keepsRows
    }

    /// Decodes a body into a batch record (and its events, with ``keepsEvents``), or the error answer it earns.
    ///
    /// Every event is checked whatever the store; rows are written only for a store that keeps rows.
    public func decode(_ body: [UInt8], receivedAt: Int64) -> Result<(BatchRecord, [Event]), IngestResponse> {
        let maxBody = self.maxBody
        guard body.count <= maxBody else {
            return .failure(.error(413, "body_too_large", "\(body.count) bytes is past the \(maxBody)-byte limit"))
        }
        let decoder = FrameDecoder(limits: frameLimits)
        let frame: DecodedFrame
        do {
            frame = try decoder.decode(body)
        } catch {
            return .failure(Self.answer(for: error))
        }
        var events: [Event] = []
        var rows = EventRows.empty
        var count = 0
        do throws(DecodeError) {
            if keepsEvents {
                events = try EventDecoder().decodeBatch(frame.payload)
                count = events.count
                if !store.keepsFrames || keepsRows {
                    rows = EventRows(events, maxTextBytes: limits.rowBytes(forPayload: frame.payload.count))
                }
            } else if store.keepsFrames && !keepsRows {
                try frame.payload.withUnsafeBytes { raw in
                    Result { () throws(DecodeError) in try EventDecoder().forEachEventView(inBatch: raw) { _ in count += 1 } }
                }.get()
            } else {
                rows = try EventRows(payload: frame.payload, maxTextBytes: limits.rowBytes(forPayload: frame.payload.count))
                count = rows.count
            }
        } catch {
            let offset = error.offset
            return .failure(.error(400, "malformed_event", "\(error.field) at payload byte \(offset): \(error)"))
        }
        guard rows.isComplete else {
            return .failure(.error(413, "rows_too_large", """
                the events' row text is past \(limits.rowBytes(forPayload: frame.payload.count)) bytes \
                (\(limits.maxRowBytes) at most, \(IngestLimits.rowExpansion) times the payload)
                """))
        }
        let record = BatchRecord(
            batchID: frame.header.batchID.description, receivedAt: receivedAt, codec: frame.header.codec.description,
            frame: body, eventCount: count, rows: rows
        )
        return .success((record, events))
    }

    /// The bytes a request with `body` may hold while it is handled, from the frame's header alone: the body, the
    /// payload it declares, and twice the row text that payload may become (the rows' buffer while it grows, or the
    /// rows and their copy into the live feed). A body whose header does not decode costs its own size (it is
    /// refused before anything else is allocated).
    public func memoryCharge(for body: [UInt8]) -> Int {
        guard let header = try? FrameDecoder(limits: frameLimits).decodeHeader(body) else { return body.count }
        let payload = Int(header.uncompressedLength)
        return body.count + payload + (keepsRows || !store.keepsFrames ? 2 * limits.rowBytes(forPayload: payload) : 0)
    }

    private var frameLimits: FrameLimits {
        FrameLimits(maxFrameBytes: maxBody, maxUncompressedBytes: limits.maxDecompressed, maxRecords: 1_000_000)
    }

    /// Handles one `POST /v1/batch` body: 200 only after the store committed.
    public func handle(_ body: [UInt8], receivedAt: Int64) async -> IngestResponse {
        let record: BatchRecord
        let events: [Event]
        switch decode(body, receivedAt: receivedAt) {
        case .failure(let answer): return answer
        case .success(let decoded): (record, events) = decoded
        }
        let result: InsertResult
        do {
            result = try await store.insert(record)
        } catch {
            var answer = IngestResponse.error(503, "store_unavailable", "the store is not answering; retry later", retryAfter: 1)
            answer.logDetail = error.message
            return answer
        }
        let body = JSONValue.object([
            .init("batch_id", .string(record.batchID)),
            .init("events", .int(Int64(record.eventCount))),
            .init("duplicate", .bool(result == .duplicate)),
        ]).serialized
        var answer = IngestResponse(status: 200, body: body, storedEventCount: result == .stored ? record.eventCount : 0,
                                    storedEvents: result == .stored ? events : [], duplicate: result == .duplicate)
        if result == .stored { answer.storedBatch = record }
        return answer
    }

    /// The status and reason for a bad frame.
    static func answer(for error: FrameError) -> IngestResponse {
        let status = switch error.kind {
        case .tooLarge: 413
        case .unsupportedVersion, .unknownCodec, .codecUnavailable: 415
        default: 400
        }
        let offset = error.offset.map { " at byte \($0)" } ?? ""
        return .error(status, error.kind.rawValue, "\(error.field)\(offset): \(error.reason)")
    }
}
