internal import CSpoorProtobuf
public import SpoorCore

/// Limits that keep decoding of untrusted bytes bounded in time and memory.
public struct DecodeLimits: Sendable, Hashable {
    /// The largest encoded event accepted, in bytes.
    public var maxEventBytes: Int
    /// The most properties one event may carry.
    public var maxProperties: Int
    /// The longest string, in UTF-8 bytes.
    public var maxStringBytes: Int
    /// The most strings one list may hold.
    public var maxListLength: Int

    /// Creates limits; the defaults follow events.md §3 with headroom for preset properties.
    public init(maxEventBytes: Int = 1 << 20, maxProperties: Int = 1000, maxStringBytes: Int = 8192, maxListLength: Int = 500) {
        self.maxEventBytes = maxEventBytes
        self.maxProperties = maxProperties
        self.maxStringBytes = maxStringBytes
        self.maxListLength = maxListLength
    }
}

/// Decodes protobuf `spoor.v1.Event` messages and `Batch`es from untrusted bytes.
///
/// Malformed input never crashes the decoder and never makes it allocate
/// more than a fixed multiple of the input: it throws a ``DecodeError`` that
/// names the reason, the field and the byte offset. A decoder reuses its
/// memory between calls and is not safe to share between threads.
public final class EventDecoder {
    private let decoder: OpaquePointer
    /// The limits this decoder enforces.
    public let limits: DecodeLimits

    /// Creates a decoder with the given limits.
    public init(limits: DecodeLimits = DecodeLimits()) {
        self.limits = limits
        let cLimits = spoor_decode_limits(
            max_event_bytes: max(0, limits.maxEventBytes),
            max_properties: max(0, limits.maxProperties),
            max_string_bytes: max(0, limits.maxStringBytes),
            max_list_length: max(0, limits.maxListLength)
        )
        guard let decoder = spoor_decoder_new(cLimits) else {
            fatalError("Spoor: out of memory creating an event decoder")
        }
        self.decoder = decoder
    }

    deinit {
        spoor_decoder_free(decoder)
    }

    /// Decodes one encoded event.
    public func decode(_ bytes: [UInt8]) throws(DecodeError) -> Event {
        try bytes.withUnsafeBytes { raw in Result { () throws(DecodeError) in try decode(raw) } }.get()
    }

    /// Decodes one encoded event.
    public func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Event {
        try decode(bytes, base: 0, eventIndex: nil)
    }

    /// Decodes a protobuf `Batch`: every event in order.
    public func decodeBatch(_ bytes: [UInt8]) throws(DecodeError) -> [Event] {
        try bytes.withUnsafeBytes { raw in Result { () throws(DecodeError) in try decodeBatch(raw) } }.get()
    }

    /// Decodes a protobuf `Batch`: every event in order.
    public func decodeBatch(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> [Event] {
        var events: [Event] = []
        try forEachEvent(inBatch: bytes) { event in events.append(event) }
        return events
    }

    /// Decodes a protobuf `Batch` one event at a time, without holding them all.
    public func forEachEvent(
        inBatch bytes: UnsafeRawBufferPointer,
        _ body: (Event) throws(DecodeError) -> Void
    ) throws(DecodeError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var offset = 0
        var index = 0
        var error = spoor_decode_error()
        while offset < bytes.count {
            var start = 0, length = 0, next = 0
            let status = spoor_batch_next(base, bytes.count, offset, &start, &length, &next, &error)
            guard status == SPOOR_DECODE_OK else { throw DecodeError(error, eventIndex: index) }
            if start == bytes.count { break }
            let slice = UnsafeRawBufferPointer(start: base + start, count: length)
            try body(try decode(slice, base: start, eventIndex: index))
            offset = next
            index += 1
        }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?) throws(DecodeError) -> Event {
        var view = spoor_event_view()
        var error = spoor_decode_error()
        // An empty input is a valid empty message, but an event without a type is not.
        let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        let status = spoor_decode_event(decoder, data, bytes.count, &view, &error)
        guard status == SPOOR_DECODE_OK else {
            throw DecodeError(error, base: base, eventIndex: eventIndex)
        }
        // Enums are open: numbers this version does not know are kept (the shim refuses only type 0).
        let type = EventType(rawValue: view.type)
        let method = LibMethod(rawValue: view.lib_method)

        var properties = Properties(minimumCapacity: view.prop_count)
        for index in 0..<view.prop_count {
            let prop = view.props[index]
            let value: PropertyValue
            switch Int(prop.kind) {
            case Int(SPOOR_KIND_STRING): value = .string(string(prop.str))
            case Int(SPOOR_KIND_INT): value = .int(prop.integer)
            case Int(SPOOR_KIND_DOUBLE): value = .double(prop.real)
            case Int(SPOOR_KIND_BOOL): value = .bool(prop.integer != 0)
            case Int(SPOOR_KIND_DATE): value = .date(prop.integer)
            default:
                var items: [String] = []
                items.reserveCapacity(prop.list_count)
                for item in 0..<prop.list_count { items.append(string(prop.list[item])) }
                value = .list(items)
            }
            properties[string(prop.key)] = value
        }

        return Event(
            name: string(view.event),
            type: type,
            time: view.time,
            trackID: view.track_id,
            sequence: view.sequence,
            distinctID: string(view.distinct_id),
            anonymousID: string(view.anonymous_id),
            loginID: optional(view.login_id),
            lib: LibInfo(lib: string(view.lib), libVersion: string(view.lib_version), method: method, appVersion: string(view.app_version)),
            properties: properties,
            sessionID: optional(view.session_id),
            originalID: optional(view.original_id)
        )
    }

    @inline(__always)
    private func string(_ view: spoor_str_view) -> String {
        guard view.len > 0, let pointer = view.ptr else { return "" }
        // The scan validated the UTF-8, so decoding takes the fast path.
        return pointer.withMemoryRebound(to: UInt8.self, capacity: view.len) {
            String(decoding: UnsafeBufferPointer(start: $0, count: view.len), as: UTF8.self)
        }
    }

    @inline(__always)
    private func optional(_ view: spoor_str_view) -> String? {
        view.len == 0 ? nil : string(view)
    }
}
