import Foundation
public import SpoorModel
public import SpoorWire

/// Where a text column's bytes are in ``EventRows/text``; a negative count is SQL `NULL`.
public struct TextSpan: Sendable, Hashable {
    /// The first byte's offset.
    public var start: Int32
    /// The length in bytes, or -1 for `NULL`.
    public var count: Int32

    /// `NULL`.
    public static let null = TextSpan(start: 0, count: -1)

    /// Whether the column is `NULL`.
    public var isNull: Bool { count < 0 }
}

/// The `events` rows of one batch, as the stores write them: each row's numbers, and its text columns as spans of
/// one buffer of UTF-8, written straight from the decoder's views.
///
/// No `String` per column: a store binds each span (SQLite) or copies it into its wire format (PostgreSQL). An
/// ``EventRow`` per row, with `String`s, is there for tests and tools (``row(_:)``).
public struct EventRows: Sendable {
    /// One row: its numbers and the spans of its text columns.
    public struct Row: Sendable, Hashable {
        /// The event's index in its batch.
        public var idx: Int32
        /// Event time, epoch milliseconds.
        public var timeMs: Int64
        /// The install's sequence number (bit pattern of the unsigned value).
        public var sequence: Int64
        /// `name`, `type`, `distinct_id`, `anonymous_id`.
        public var name, type, distinctID, anonymousID: TextSpan
        /// `login_id`, `session_id`: `NULL` when the event has none.
        public var loginID, sessionID: TextSpan
        /// `track_id` (16 hex digits), `lib` and `properties` (JSON).
        public var trackID, lib, properties: TextSpan
    }

    /// The rows, in batch order.
    public let rows: [Row]
    /// The text columns' bytes.
    public let text: RowText

    /// Whether every row was written: false when the text went past the limit it was written with, and the rows
    /// must then not be stored (the batch is refused as too large).
    public let isComplete: Bool

    /// The number of rows.
    public var count: Int { rows.count }

    /// No rows.
    public static let empty = EventRows(rows: [], text: RowText(GrowableBytes()), isComplete: true)

    init(rows: [Row], text: RowText, isComplete: Bool) {
        self.rows = rows
        self.text = text
        self.isComplete = isComplete
    }

    /// The rows of a protobuf `Batch` payload, written from `decoder`'s views of its events. Text is never held
    /// past `maxTextBytes`: what would pass it is not written and ``isComplete`` is false; every event is still
    /// checked.
    public init(payload: [UInt8], decoder: EventDecoder = EventDecoder(), maxTextBytes: Int = EventRows.maxTextBytes) throws(DecodeError) {
        var writer = RowWriter(capacity: payload.count + payload.count / 2, limit: min(maxTextBytes, EventRows.maxTextBytes))
        try payload.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in try decoder.forEachEventView(inBatch: raw) { view in writer.append(view) } }
        }.get()
        self = writer.finish()
    }

    /// The rows of `events`, through the same JSON as rows from views (`EventRowsTests` compares them); past
    /// `maxTextBytes` as for a payload.
    public init(_ events: [Event], maxTextBytes: Int = EventRows.maxTextBytes) {
        var writer = RowWriter(capacity: events.count * 512, limit: min(maxTextBytes, EventRows.maxTextBytes))
        for event in events { writer.append(event) }
        self = writer.finish()
    }

    /// The most text one batch's rows may hold, whatever a caller asks: every span's offset fits the `Int32` it is
    /// kept in.
    public static let maxTextBytes = 1 << 30

    /// Row `index` with its text as `String`s.
    public func row(_ index: Int) -> EventRow {
        let row = rows[index]
        return EventRow(
            idx: Int(row.idx), name: text.string(row.name), type: text.string(row.type), timeMs: row.timeMs,
            distinctID: text.string(row.distinctID), anonymousID: text.string(row.anonymousID),
            loginID: row.loginID.isNull ? nil : text.string(row.loginID),
            sessionID: row.sessionID.isNull ? nil : text.string(row.sessionID), trackID: text.string(row.trackID),
            sequence: row.sequence, lib: text.string(row.lib), properties: text.string(row.properties)
        )
    }

    /// Every row with its text as `String`s.
    public var all: [EventRow] { rows.indices.map(row(_:)) }
}

/// One `events` row with its text as `String`s, for tests and tools.
public struct EventRow: Sendable, Hashable {
    /// The event's index in its batch.
    public var idx: Int
    /// The event name.
    public var name: String
    /// The record type's name, such as `track`.
    public var type: String
    /// Event time, epoch milliseconds.
    public var timeMs: Int64
    /// The distinct id.
    public var distinctID: String
    /// The anonymous id.
    public var anonymousID: String
    /// The login id, if any.
    public var loginID: String?
    /// The session id, if any.
    public var sessionID: String?
    /// The track id as 16 hex digits.
    public var trackID: String
    /// The install's sequence number (bit pattern of the unsigned value).
    public var sequence: Int64
    /// The library info as JSON.
    public var lib: String
    /// The properties as JSON.
    public var properties: String
}

/// The immutable bytes of a batch's text columns.
///
/// Unchecked: it holds raw memory, written only before the object is made and freed only when it goes.
public final class RowText: @unchecked Sendable {
    /// The bytes; owned by this object, never written after it is made.
    public let bytes: UnsafeRawBufferPointer

    init(_ buffer: consuming GrowableBytes) {
        bytes = buffer.take()
    }

    deinit { bytes.deallocate() }

    /// The bytes of `span` (empty for `NULL`).
    @inline(__always)
    public func bytes(_ span: TextSpan) -> UnsafeRawBufferPointer {
        guard span.count > 0, let base = bytes.baseAddress else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + Int(span.start), count: Int(span.count))
    }

    /// The text of `span`.
    public func string(_ span: TextSpan) -> String { String(decoding: bytes(span), as: UTF8.self) }
}

/// Growable bytes in plain memory: appending costs a bounds check and a copy, no uniqueness check as an `Array`'s.
///
/// It never holds more than ``limit`` bytes, nor allocates more: an append past the limit writes nothing and sets
/// ``isOverLimit``, after which the contents are incomplete.
struct GrowableBytes: ~Copyable {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private var capacity = 0
    /// The most bytes held.
    let limit: Int
    /// An append would have passed ``limit``.
    private(set) var isOverLimit = false

    init() { limit = .max }

    init(capacity: Int, limit: Int = .max) {
        self.limit = limit
        reserve(capacity)
    }

    deinit { base?.deallocate() }

    /// Hands the bytes over (the buffer is empty afterwards).
    mutating func take() -> UnsafeRawBufferPointer {
        defer {
            base = nil
            count = 0
            capacity = 0
        }
        return UnsafeRawBufferPointer(start: base, count: count)
    }

    /// Makes room for `extra` more bytes, as far as the limit allows (a hint: appends check again).
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: min(count + extra, limit)) }
    }

    /// Whether `extra` more bytes fit under the limit, with room made for them; else the buffer is over its limit.
    @inline(__always)
    private mutating func room(for extra: Int) -> Bool {
        guard extra <= limit - count else {
            isOverLimit = true
            return false
        }
        if count + extra > capacity { grow(to: count + extra) }
        return true
    }

    @inline(never)
    private mutating func grow(to needed: Int) {
        guard needed > capacity else { return }
        var grown = max(capacity * 2, 4096)
        while grown < needed { grown *= 2 }
        grown = max(min(grown, limit), needed)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        if let base {
            memory.copyMemory(from: base, byteCount: count)
            base.deallocate()
        }
        base = memory
        capacity = grown
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        guard room(for: 1) else { return }
        base!.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty, room(for: bytes.count) else { return }
        (base! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// The bytes written so far (valid until the next append).
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}
