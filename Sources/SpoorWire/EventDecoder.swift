internal import CSpoorProtobuf
public import SpoorModel

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

    /// Creates limits; the defaults follow docs/events.md, "Validation" with headroom for preset properties.
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
        guard let decoder = spoor_decoder_new(Self.cLimits(limits)) else {
            fatalError("Spoor: out of memory creating an event decoder")
        }
        self.decoder = decoder
        viewReader = ViewReader(limits: Self.cLimits(limits))
    }

    deinit {
        viewReader.deallocate()
        spoor_decoder_free(decoder)
        if let contextDecoder { spoor_decoder_free(contextDecoder) }
    }

    private static func cLimits(_ limits: DecodeLimits) -> spoor_decode_limits {
        spoor_decode_limits(
            max_event_bytes: max(0, limits.maxEventBytes),
            max_properties: max(0, limits.maxProperties),
            max_string_bytes: max(0, limits.maxStringBytes),
            max_list_length: max(0, limits.maxListLength)
        )
    }

    /// Makes every event that extends a context decode through the merged bytes (the rule's definition), never
    /// over a context decoded once: for tests and fuzzing that compare the two.
    @_spi(Testing) public var alwaysMergesBytes = false
    /// How many events were decoded over a context decoded once (not through the merged bytes).
    @_spi(Testing) public private(set) var eventsDecodedOverContext = 0

    /// Decodes views of plainly shaped events in one pass in Swift; anything else takes the C scan and protobuf-c.
    private var viewReader: ViewReader
    /// Makes ``forEachEventView(inBatch:_:)`` decode every event through the C scan and protobuf-c, as events are:
    /// for tests and fuzzing that hold the Swift pass to the same views and errors.
    @_spi(Testing) public var viewsThroughProtobufC = false
    /// How many views the Swift pass decoded (the others went through protobuf-c).
    @_spi(Testing) public private(set) var viewsReadInSwift = 0

    /// Holds the context the events of a batch extend, decoded once (created when first needed).
    private var contextDecoder: OpaquePointer?
    /// Which of the current batch's contexts `contextDecoder` holds, or nil; reset for every batch.
    private var decodedContext: Int?

    /// Decodes one encoded event.
    public func decode(_ bytes: [UInt8]) throws(DecodeError) -> Event {
        try bytes.withUnsafeBytes { raw in Result { () throws(DecodeError) in try decode(raw) } }.get()
    }

    /// Decodes one encoded event.
    ///
    /// An event that refers to a batch's shared context cannot be made whole alone: decode its batch instead.
    public func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Event {
        let (event, reference) = try decode(bytes, base: 0, eventIndex: nil)
        guard reference == 0 else {
            throw DecodeError(kind: .unknownContext, field: "context", offset: 0, detail: UInt64(reference))
        }
        return event
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
    ///
    /// Events that refer to a shared context (`Batch.contexts`) are made whole: the context merged under the
    /// event, then the time and sequence offsets added (the rule in `proto/spoor/v1/event.proto`), so `body`
    /// sees every event as it was recorded, whether the batch stores contexts or not.
    public func forEachEvent(
        inBatch bytes: UnsafeRawBufferPointer,
        _ body: (Event) throws(DecodeError) -> Void
    ) throws(DecodeError) {
        try forEachView(inBatch: bytes, fast: false) { view throws(DecodeError) in try body(makeEvent(view)) }
    }

    /// Decodes a protobuf `Batch` one event at a time as borrowed views, without building `Event`s: the same
    /// checks, limits, errors and shared-context rule as ``forEachEvent(inBatch:_:)``, for readers that write
    /// each event into another form. A view is valid only inside `body`.
    public func forEachEventView(
        inBatch bytes: UnsafeRawBufferPointer,
        _ body: (EventView) throws(DecodeError) -> Void
    ) throws(DecodeError) {
        try forEachView(inBatch: bytes, fast: !viewsThroughProtobufC) { view throws(DecodeError) in try body(EventView(view)) }
    }

    private func forEachView(
        inBatch bytes: UnsafeRawBufferPointer, fast: Bool,
        _ body: (spoor_event_view) throws(DecodeError) -> Void
    ) throws(DecodeError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let contexts = Self.contexts(inBatch: bytes)
        decodedContext = nil
        viewReader.resetContext()
        var offset = 0
        var index = 0
        var error = spoor_decode_error()
        while offset < bytes.count {
            var start = 0, length = 0, next = 0
            let status = spoor_batch_next(base, bytes.count, offset, &start, &length, &next, &error)
            guard status == SPOOR_DECODE_OK else { throw DecodeError(error, eventIndex: index) }
            if start == bytes.count { break }
            let slice = UnsafeRawBufferPointer(start: base + start, count: length)
            try body(try decodeView(slice, base: start, eventIndex: index, contexts: contexts, batch: bytes, fast: fast))
            offset = next
            index += 1
        }
    }

    /// Where the `Batch.contexts` entries are, in order. A broken batch stops the scan at the damage, which
    /// the pass over the events then reports where it meets it.
    private static func contexts(inBatch bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return [] }
        var contexts: [Range<Int>] = []
        var offset = 0
        var error = spoor_decode_error()
        while offset < bytes.count {
            var start = 0, length = 0, next = 0
            guard spoor_batch_next_field(base, bytes.count, offset, 2, &start, &length, &next, &error) == SPOOR_DECODE_OK,
                start < bytes.count
            else { break }
            contexts.append(start..<start + length)
            offset = next
        }
        return contexts
    }

    /// The last `context` (field 13) of an encoded event, 0 when it has none or the bytes are broken (the
    /// decode that follows reports the damage).
    private static func contextReference(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var index = 0
        var reference: UInt64 = 0
        while index < bytes.count {
            guard let key = Varint.read(bytes, at: &index) else { return 0 }
            switch key & 7 {
            case 0:
                guard let value = Varint.read(bytes, at: &index) else { return 0 }
                if key >> 3 == 13 { reference = value }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = Varint.read(bytes, at: &index), length <= UInt64(bytes.count - index) else { return 0 }
                index += Int(length)
            default: return 0
            }
        }
        return reference
    }

    /// Scratch for an event merged over its context, kept for its capacity.
    private var merged: [UInt8] = []

    /// The view of one event of a batch, merged over its shared context when it refers to one. It points into
    /// the decoder's arena: valid until the next decode.
    private func decodeView(
        _ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?, contexts: [Range<Int>], batch: UnsafeRawBufferPointer,
        fast: Bool
    ) throws(DecodeError) -> spoor_event_view {
        let reference = contexts.isEmpty ? 0 : Self.contextReference(bytes)
        guard reference != 0 else {
            // A view that names a context with none in the batch goes on to the error below.
            if fast, let view = fastView(bytes, context: nil, batch: batch), view.context == 0 { return view }
            let view = try decodeView(bytes, base: base, eventIndex: eventIndex)
            guard view.context == 0 else {
                throw DecodeError(kind: .unknownContext, field: "context", offset: base, detail: UInt64(view.context), eventIndex: eventIndex)
            }
            return view
        }
        guard reference <= UInt64(contexts.count) else {
            throw DecodeError(kind: .unknownContext, field: "context", offset: base, detail: reference, eventIndex: eventIndex)
        }
        let context = contexts[Int(reference - 1)]
        if fast, let view = fastView(bytes, context: (Int(reference - 1), context), batch: batch) {
            eventsDecodedOverContext += 1
            return view
        }
        // Most events (all the tracker writes) merge over their context as a plain override of fields: then the
        // context, decoded once per batch, is not parsed again for every event.
        if let view = decodeOverContext(bytes, context: Int(reference - 1), range: context, batch: batch) { return view }
        // The rule's step 1: protobuf's merge is the parse of the context's bytes followed by the event's.
        var merged: [UInt8] = []
        swap(&merged, &self.merged)
        defer { swap(&merged, &self.merged) }
        merged.removeAll(keepingCapacity: true)
        merged.append(contentsOf: UnsafeRawBufferPointer(rebasing: batch[context]))
        merged.append(contentsOf: bytes)
        let contextLength = context.count
        // protobuf-c copies every string into the arena, so the view outlives `merged`'s reuse.
        return try merged.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in try decodeView(raw, base: 0, eventIndex: eventIndex) }
        }.mapError { error in
            // Point at the byte in the batch: in the context, or in the event after it.
            var error = error
            error.offset = error.offset < contextLength ? context.lowerBound + error.offset : base + error.offset - contextLength
            return error
        }.get()
    }

    /// The view of a plainly shaped event (over a context of the batch) by one pass in Swift, or nil: the C path
    /// then decodes it, or reports its error.
    private func fastView(
        _ bytes: UnsafeRawBufferPointer, context: (index: Int, range: Range<Int>)?, batch: UnsafeRawBufferPointer
    ) -> spoor_event_view? {
        if let context, viewReader.contextIndex != context.index {
            guard viewReader.refusedContext != context.index,
                  viewReader.readContext(UnsafeRawBufferPointer(rebasing: batch[context.range]), index: context.index)
            else { return nil }
        }
        var view = spoor_event_view()
        guard viewReader.read(bytes, overContext: context != nil, into: &view) else { return nil }
        viewsReadInSwift += 1
        return view
    }

    /// The view of an event over context `index` of the batch by `spoor_decode_event_over`, or nil when the
    /// merge is not a plain override or anything is invalid (the caller then merges the bytes, which gives the
    /// same view or reports the error exactly).
    private func decodeOverContext(
        _ bytes: UnsafeRawBufferPointer, context index: Int, range: Range<Int>, batch: UnsafeRawBufferPointer
    ) -> spoor_event_view? {
        if alwaysMergesBytes { return nil }
        if contextDecoder == nil { contextDecoder = spoor_decoder_new(Self.cLimits(limits)) }
        guard let contextDecoder, let batchBase = batch.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return nil }
        if decodedContext != index {
            decodedContext = nil
            guard spoor_decode_context(contextDecoder, batchBase + range.lowerBound, range.count) == 1 else { return nil }
            decodedContext = index
        }
        var view = spoor_event_view()
        guard spoor_decode_event_over(decoder, contextDecoder, data, bytes.count, &view) == 1 else { return nil }
        eventsDecodedOverContext += 1
        return view
    }

    /// The event and its `context` reference (0 for none).
    private func decode(_ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?) throws(DecodeError) -> (event: Event, context: UInt32) {
        let view = try decodeView(bytes, base: base, eventIndex: eventIndex)
        return (makeEvent(view), view.context)
    }

    /// The checked view of one encoded event, in the decoder's arena (valid until the next decode).
    private func decodeView(_ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?) throws(DecodeError) -> spoor_event_view {
        var view = spoor_event_view()
        var error = spoor_decode_error()
        // An empty input is a valid empty message, but an event without a type is not.
        let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        let status = spoor_decode_event(decoder, data, bytes.count, &view, &error)
        guard status == SPOOR_DECODE_OK else {
            throw DecodeError(error, base: base, eventIndex: eventIndex)
        }
        return view
    }

    /// The ``Event`` a view describes, with its own strings.
    private func makeEvent(_ view: spoor_event_view) -> Event {
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

        let event = Event(
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
        return event
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
