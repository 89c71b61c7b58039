#if SPOOR_SYSTEM_LIBRARIES
internal import CSpoorProtobuf
internal import CSpoorViews
import SpoorModel

/// The encoder's protobuf-c path: the strings, properties and list items of one event, flattened for the C shim,
/// which builds protobuf-c's structs and packs them (`Sources/CSpoorProtobuf/spoor_encoder.c`). Owned by one
/// encoder; freed with ``deallocate()``.
struct ProtobufCEncoding {
    private let encoder: OpaquePointer
    /// NUL-terminated UTF-8 of every string of the event; offset 0 is "".
    var text = TextBlock()
    var props = ScratchList<spoor_prop_in>()
    var listOffsets = ScratchList<UInt32>()
    /// Where protobuf-c packs the event, with room for its batch entry header before it.
    var packed = ScratchList<UInt8>()

    init() {
        guard let encoder = spoor_encoder_new() else {
            fatalError("Spoor: out of memory creating an event encoder")
        }
        self.encoder = encoder
    }

    mutating func deallocate() {
        spoor_encoder_free(encoder)
        text.deallocate()
        props.deallocate()
        listOffsets.deallocate()
        packed.deallocate()
    }

    /// Appends the encoding of `event` (as a batch entry with tag `entryTag`, when there is one) followed by
    /// `suffix` to `buffer`, in one copy; on error `buffer` is left as it was.
    mutating func encode(_ event: Event, into buffer: inout [UInt8], entryTag: UInt8?, suffix: [UInt8]) throws(EncodeError) {
        text.reset()
        props.removeAll()
        listOffsets.removeAll()

        var input = spoor_event_in()
        input.event = try store(event.name, "event")
        input.type = event.type.rawValue
        input.time = event.time
        input.track_id = event.trackID
        input.sequence = event.sequence
        input.distinct_id = try store(event.distinctID, "distinct_id")
        input.anonymous_id = try store(event.anonymousID, "anonymous_id")
        input.login_id = try store(event.loginID ?? "", "login_id")
        input.session_id = try store(event.sessionID ?? "", "session_id")
        input.original_id = try store(event.originalID ?? "", "original_id")
        input.lib = try store(event.lib.lib, "lib.lib")
        input.lib_version = try store(event.lib.libVersion, "lib.lib_version")
        input.app_version = try store(event.lib.appVersion, "lib.app_version")
        input.lib_method = event.lib.method.rawValue

        for (key, value) in event.properties {
            var prop = spoor_prop_in()
            prop.key = try store(key, "properties.key")
            switch value {
            case .string(let string):
                prop.kind = UInt32(SPOOR_KIND_STRING)
                prop.str = try store(string, "properties.value.string_value")
            case .int(let int):
                prop.kind = UInt32(SPOOR_KIND_INT)
                prop.integer = int
            case .double(let double):
                guard double.isFinite else {
                    throw EncodeError(field: "properties.value.double_value", reason: "\(key): \(double) is not finite")
                }
                prop.kind = UInt32(SPOOR_KIND_DOUBLE)
                prop.real = double
            case .bool(let bool):
                prop.kind = UInt32(SPOOR_KIND_BOOL)
                prop.integer = bool ? 1 : 0
            case .date(let millis):
                prop.kind = UInt32(SPOOR_KIND_DATE)
                prop.integer = millis
            case .list(let items):
                prop.kind = UInt32(SPOOR_KIND_LIST)
                prop.list_start = UInt32(listOffsets.count)
                prop.list_count = UInt32(items.count)
                for item in items {
                    listOffsets.append(try store(item, "properties.value.list_value.values"))
                }
            }
            props.append(prop)
        }

        // protobuf-c strings end at the first NUL, so one inside a string would cut it short.
        if text.hasEmbeddedNUL { throw EncodeError.embeddedNUL(in: event) }

        // The message points into `text`, `listOffsets` and `props`. protobuf-c packs into `packed` after
        // room for the longest entry header; the header goes right before the body and the suffix after it,
        // and the whole entry is copied into `buffer` once (packing into `buffer` meant zero-filling a
        // bound's worth of it first and trimming after).
        let bound = sizeBound
        let headerRoom = entryTag == nil ? 0 : Self.maxBatchEntryHeader
        packed.reserve(headerRoom + bound + suffix.count)
        let body = packed.base! + headerRoom
        let textBase = UnsafeRawPointer(text.base!).assumingMemoryBound(to: CChar.self)
        input.text = textBase
        input.list_offsets = UnsafePointer(listOffsets.base)
        input.props = UnsafePointer(props.base)
        input.prop_count = props.count
        let written = spoor_encoder_build(encoder, &input) != 0 ? spoor_encoder_pack(encoder, body) : -1
        guard written >= 0 else {
            throw EncodeError(field: "event", reason: "out of memory")
        }
        // `bound` is an upper bound by construction; past it, pack wrote out of bounds.
        precondition(written <= bound, "Spoor: an event of \(written) bytes overran its bound of \(bound)")
        if !suffix.isEmpty {
            suffix.withUnsafeBufferPointer { (body + written).update(from: $0.baseAddress!, count: $0.count) }
        }
        let bodySize = written + suffix.count
        let entryStart = entryTag.map { Self.writeBatchEntryHeader(tag: $0, bodySize: bodySize, before: body) } ?? body
        buffer.append(contentsOf: UnsafeBufferPointer(start: entryStart, count: body + bodySize - entryStart))
    }

    /// The largest batch entry header: the tag byte and a ten-byte length varint.
    static let maxBatchEntryHeader = 11

    /// An upper bound of the encoded size of the event in `text`, `props` and `listOffsets`.
    ///
    /// Every field costs at most a one-byte tag (all field numbers are below 16), a varint
    /// of at most ten bytes (a length or a scalar; fixed64 and double take eight) and, for
    /// a string, its bytes, which `text` holds with a NUL each to spare. An event has 12
    /// fields and its lib 4; a property at most four (the map entry, its key, its value
    /// message and the value's field); a list item one.
    var sizeBound: Int {
        text.count + 11 * (12 + 4) + 11 * 4 * props.count + 11 * listOffsets.count
    }

    /// Writes an entry's tag (`Batch.events` or `Batch.contexts`) and `bodySize` as a varint in the bytes
    /// just before `body` and returns where the header starts; `body` has ``maxBatchEntryHeader`` bytes of
    /// room before it.
    static func writeBatchEntryHeader(tag: UInt8, bodySize: Int, before body: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let start = body - 1 - Varint.length(of: UInt64(bodySize))
        start[0] = tag
        _ = Varint.write(UInt64(bodySize), at: start + 1)
        return start
    }

    /// Copies `string` with its NUL into `text` and returns its offset.
    @inline(__always)
    mutating func store(_ string: String, _ field: StaticString) throws(EncodeError) -> UInt32 {
        if string.isEmpty { return 0 }
        guard let offset = text.append(string) else { throw EncodeError.tooLarge(field) }
        return offset
    }
}
#endif
