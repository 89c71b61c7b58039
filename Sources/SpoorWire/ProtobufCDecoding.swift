#if SPOOR_SYSTEM_LIBRARIES
internal import CSpoorProtobuf
internal import CSpoorViews

/// The decoder's protobuf-c path: the C shim's scan and protobuf-c's unpack into a bounded arena
/// (`Sources/CSpoorProtobuf/spoor_decoder.c`).
final class ProtobufCDecoder {
    private let decoder: OpaquePointer
    /// Holds the context the events of a batch extend, decoded once (created when first needed).
    private var contextDecoder: OpaquePointer?
    /// Which of the current batch's contexts `contextDecoder` holds, or nil; reset for every batch.
    private var decodedContext: Int?
    private let limits: spoor_decode_limits

    init(limits: DecodeLimits) {
        self.limits = spoor_decode_limits(
            max_event_bytes: max(0, limits.maxEventBytes),
            max_properties: max(0, limits.maxProperties),
            max_string_bytes: max(0, limits.maxStringBytes),
            max_list_length: max(0, limits.maxListLength)
        )
        guard let decoder = spoor_decoder_new(self.limits) else {
            fatalError("Spoor: out of memory creating an event decoder")
        }
        self.decoder = decoder
    }

    deinit {
        spoor_decoder_free(decoder)
        if let contextDecoder { spoor_decoder_free(contextDecoder) }
    }

    /// Forgets the context (a new batch).
    func resetContext() { decodedContext = nil }

    /// The checked view of one encoded event, in the arena (valid until the next decode).
    func decode(_ bytes: UnsafeRawBufferPointer, base: Int, eventIndex: Int?) throws(DecodeError) -> spoor_event_view {
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

    /// The view of an event over context `index` of the batch by `spoor_decode_event_over`, or nil when the
    /// merge is not a plain override or anything is invalid (the caller then merges the bytes, which gives the
    /// same view or reports the error exactly).
    func decodeOverContext(
        _ bytes: UnsafeRawBufferPointer, context index: Int, range: Range<Int>, batch: UnsafeRawBufferPointer
    ) -> spoor_event_view? {
        if contextDecoder == nil { contextDecoder = spoor_decoder_new(limits) }
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
        return view
    }

    /// The next entry of Batch field `field` (1 events, 2 contexts) from `offset`, by the shim's walk; `nil` when no
    /// entry remains.
    static func nextEntry(
        inBatch bytes: UnsafeRawBufferPointer, from offset: Int, field: UInt32
    ) throws(DecodeError) -> (body: Range<Int>, next: Int)? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var start = 0, length = 0, next = 0
        var error = spoor_decode_error()
        guard spoor_batch_next_field(base, bytes.count, offset, field, &start, &length, &next, &error) == SPOOR_DECODE_OK else {
            throw DecodeError(error)
        }
        return start == bytes.count ? nil : (start..<start + length, next)
    }
}

extension DecodeError {
    init(_ error: spoor_decode_error, base: Int = 0, eventIndex: Int? = nil) {
        let kind: Kind = switch error.status {
        case SPOOR_DECODE_TRUNCATED: .truncated
        case SPOOR_DECODE_OVERLONG_VARINT: .overlongVarint
        case SPOOR_DECODE_LENGTH_PAST_END: .lengthPastEnd
        case SPOOR_DECODE_WRONG_WIRE_TYPE: .wrongWireType
        case SPOOR_DECODE_INVALID_TAG: .invalidTag
        case SPOOR_DECODE_INVALID_UTF8: .invalidUTF8
        case SPOOR_DECODE_EMBEDDED_NUL: .embeddedNUL
        case SPOOR_DECODE_EVENT_TOO_LARGE: .eventTooLarge
        case SPOOR_DECODE_STRING_TOO_LONG: .stringTooLong
        case SPOOR_DECODE_TOO_MANY_PROPERTIES: .tooManyProperties
        case SPOOR_DECODE_LIST_TOO_LONG: .listTooLong
        case SPOOR_DECODE_MISSING_VALUE: .missingValue
        case SPOOR_DECODE_NON_FINITE_DOUBLE: .nonFiniteDouble
        case SPOOR_DECODE_INVALID_ENUM: .invalidEnum
        case SPOOR_DECODE_OUT_OF_MEMORY: .outOfMemory
        default: .unpackFailed
        }
        self.init(
            kind: kind,
            field: error.field.map { String(cString: $0) } ?? "event",
            offset: base + error.offset,
            detail: error.detail,
            eventIndex: eventIndex
        )
    }
}
#endif
