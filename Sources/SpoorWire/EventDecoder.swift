internal import CSpoorViews
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
///
/// With the package's `SystemLibraries` trait (the default on Linux) events are decoded by protobuf-c; on Apple
/// platforms, or without the trait, by a pass in Swift that accepts the same bytes and gives the same events and
/// errors (docs/wire-paths.md).
public final class EventDecoder {
    /// The limits this decoder enforces.
    public let limits: DecodeLimits
    /// Which implementation decodes.
    @_spi(Testing) public let path: WirePath

    /// Creates a decoder with the given limits.
    public convenience init(limits: DecodeLimits = DecodeLimits()) {
        self.init(limits: limits, path: .standard)
    }

    /// Creates a decoder that decodes with `path`.
    @_spi(Testing) public init(limits: DecodeLimits = DecodeLimits(), path: WirePath) {
        self.limits = limits
        self.path = path
        viewReader = ViewReader(limits: limits)
        #if SPOOR_SYSTEM_LIBRARIES
        protobufC = path == .protobufC ? ProtobufCDecoder(limits: limits) : nil
        #endif
    }

    deinit {
        viewReader.deallocate()
        merged.deallocate()
    }

    /// Makes every event that extends a context decode through the merged bytes (the rule's definition), never
    /// over a context decoded once: for tests and fuzzing that compare the two.
    @_spi(Testing) public var alwaysMergesBytes = false
    /// How many events were decoded over a context decoded once (not through the merged bytes).
    @_spi(Testing) public private(set) var eventsDecodedOverContext = 0

    /// The Swift pass: the whole decoder on the Swift path; on the protobuf-c path, the views it accepts.
    private var viewReader: ViewReader
    /// Makes ``forEachEventView(inBatch:_:)`` decode every event as ``forEachEvent(inBatch:_:)`` does: through the C
    /// scan and protobuf-c on that path, through the merged bytes of events over a context on the Swift path. For
    /// tests and fuzzing that hold the views' shortcut to the same views and errors.
    @_spi(Testing) public var viewsThroughProtobufC = false
    /// How many views the Swift pass decoded over a context read once or, on the protobuf-c path, at all.
    @_spi(Testing) public private(set) var viewsReadInSwift = 0

    #if SPOOR_SYSTEM_LIBRARIES
    /// The protobuf-c path's decoder, on that path.
    private let protobufC: ProtobufCDecoder?
    #endif

    /// Decodes one encoded event.
    public func decode(_ bytes: [UInt8]) throws(DecodeError) -> Event {
        try bytes.withUnsafeBytes { raw in Result { () throws(DecodeError) in try decode(raw) } }.get()
    }

    /// Decodes one encoded event.
    ///
    /// An event that refers to a batch's shared context cannot be made whole alone: decode its batch instead.
    public func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Event {
        let view = try decodeView(bytes, base: 0, eventIndex: nil)
        guard view.context == 0 else {
            throw DecodeError(kind: .unknownContext, field: "context", offset: 0, detail: UInt64(view.context))
        }
        return makeEvent(view)
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
        try forEachView(inBatch: bytes, views: false) { view throws(DecodeError) in try body(makeEvent(view)) }
    }

    /// Decodes a protobuf `Batch` one event at a time as borrowed views, without building `Event`s: the same
    /// checks, limits, errors and shared-context rule as ``forEachEvent(inBatch:_:)``, for readers that write
    /// each event into another form. A view is valid only inside `body`.
    public func forEachEventView(
        inBatch bytes: UnsafeRawBufferPointer,
        _ body: (EventView) throws(DecodeError) -> Void
    ) throws(DecodeError) {
        try forEachView(inBatch: bytes, views: true) { view throws(DecodeError) in try body(EventView(view)) }
    }

    private func forEachView(
        inBatch bytes: UnsafeRawBufferPointer, views: Bool,
        _ body: (spoor_event_view) throws(DecodeError) -> Void
    ) throws(DecodeError) {
        guard bytes.baseAddress != nil else { return }
        let contexts = contexts(inBatch: bytes)
        #if SPOOR_SYSTEM_LIBRARIES
        protobufC?.resetContext()
        #endif
        viewReader.resetContext()
        var offset = 0
        var index = 0
        while offset < bytes.count {
            let entry: (body: Range<Int>, next: Int)?
            do {
                entry = try nextEntry(inBatch: bytes, from: offset, field: .events)
            } catch {
                var error = error
                error.eventIndex = index
                throw error
            }
            guard let entry else { break }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[entry.body])
            try body(try decodeView(slice, base: entry.body.lowerBound, eventIndex: index, contexts: contexts, batch: bytes, views: views))
            offset = entry.next
            index += 1
        }
    }

    /// The next entry of Batch field `field` from `offset`, on this decoder's path.
    private func nextEntry(
        inBatch bytes: UnsafeRawBufferPointer, from offset: Int, field: BatchField
    ) throws(DecodeError) -> (body: Range<Int>, next: Int)? {
        #if SPOOR_SYSTEM_LIBRARIES
        if path == .protobufC {
            return try ProtobufCDecoder.nextEntry(inBatch: bytes, from: offset, field: UInt32(field.rawValue))
        }
        #endif
        return try BatchEntries.next(inBatch: bytes, from: offset, field: field)
    }

    /// Where the `Batch.contexts` entries are, in order. A broken batch stops the scan at the damage, which
    /// the pass over the events then reports where it meets it.
    private func contexts(inBatch bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        var contexts: [Range<Int>] = []
        var offset = 0
        while offset < bytes.count, let entry = try? nextEntry(inBatch: bytes, from: offset, field: .contexts) {
            contexts.append(entry.body)
            offset = entry.next
        }
        return contexts
    }

    /// The last `context` of an encoded event, 0 when it has none or the bytes are broken (the decode that follows
    /// reports the damage).
    private static func contextReference(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var cursor = FieldCursor(bytes)
        var reference: UInt64 = 0
        do {
            while let field = try cursor.next(in: "event") {
                if field.eventField == .context, field.wireType == .varint { reference = field.value }
            }
        } catch {
            return 0
        }
        return reference
    }

    /// Scratch for an event merged over its context, kept for its capacity; on the Swift path the view of the merged
    /// event points into it until the next decode.
    private var merged = ScratchList<UInt8>()

    /// The view of one event of a batch, merged over its shared context when it refers to one. It points into
    /// the decoder's memory (or the batch): valid until the next decode.
    private func decodeView(
        _ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?, contexts: [Range<Int>], batch: UnsafeRawBufferPointer,
        views: Bool
    ) throws(DecodeError) -> spoor_event_view {
        let reference = contexts.isEmpty ? 0 : Self.contextReference(bytes)
        guard reference != 0 else {
            // A view that names a context with none in the batch goes on to the error below.
            if isProtobufC, views, !viewsThroughProtobufC, let view = fastView(bytes, context: nil, batch: batch), view.context == 0 {
                return view
            }
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
        // Most events (all the tracker writes) merge over their context by presence: then the context, read once per
        // batch, is not read again for every event.
        let shortcut = isProtobufC ? views && !viewsThroughProtobufC : !alwaysMergesBytes && !(views && viewsThroughProtobufC)
        if shortcut, let view = fastView(bytes, context: (Int(reference - 1), context), batch: batch) {
            eventsDecodedOverContext += 1
            return view
        }
        #if SPOOR_SYSTEM_LIBRARIES
        if let protobufC, !alwaysMergesBytes,
           let view = protobufC.decodeOverContext(bytes, context: Int(reference - 1), range: context, batch: batch) {
            eventsDecodedOverContext += 1
            return view
        }
        #endif
        // The rule's step 1: protobuf's merge is the parse of the context's bytes followed by the event's.
        merged.removeAll()
        merged.append(bytes: UnsafeRawBufferPointer(rebasing: batch[context]))
        merged.append(bytes: bytes)
        let contextLength = context.count
        do {
            // protobuf-c copies every string into its arena; the Swift path's view points into `merged`, which
            // stays as it is until the next decode.
            return try decodeView(UnsafeRawBufferPointer(start: merged.base, count: merged.count), base: 0, eventIndex: eventIndex)
        } catch {
            // Point at the byte in the batch: in the context, or in the event after it.
            var error = error
            error.offset = error.offset < contextLength ? context.lowerBound + error.offset : base + error.offset - contextLength
            throw error
        }
    }

    /// Whether this decoder decodes with protobuf-c.
    private var isProtobufC: Bool {
        #if SPOOR_SYSTEM_LIBRARIES
        protobufC != nil
        #else
        false
        #endif
    }

    /// The view of an event (over a context of the batch) by the Swift pass, or nil: the full decode (of the merged
    /// bytes) then gives it, or reports its error.
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

    /// The checked view of one whole encoded event (valid until the next decode), on this decoder's path.
    private func decodeView(_ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?) throws(DecodeError) -> spoor_event_view {
        #if SPOOR_SYSTEM_LIBRARIES
        if let protobufC { return try protobufC.decode(bytes, base: base, eventIndex: eventIndex) }
        #endif
        var view = spoor_event_view()
        do {
            try viewReader.decode(bytes, into: &view)
        } catch {
            var error = error
            error.offset += base
            error.eventIndex = eventIndex
            throw error
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
