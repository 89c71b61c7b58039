internal import CSpoorProtobuf
public import SpoorModel

/// Why an event could not be encoded.
public struct EncodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field at fault, such as `event` or `properties.value.string_value`.
    public var field: String
    /// What is wrong with it.
    public var reason: String

    /// Creates an encode error.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field): \(reason)" }
}

/// Encodes events as protobuf `spoor.v1.Event` messages with protobuf-c.
///
/// An encoder keeps its scratch memory between calls, so once it has seen
/// events of a given shape, encoding more allocates nothing but the growth
/// of the output buffer. It is not safe to share between threads: give each
/// writer its own.
public final class EventEncoder {
    private let encoder: OpaquePointer
    /// The flat input of the C shim, rebuilt for each event and kept for its capacity.
    private var scratch = Scratch()

    /// Creates an encoder.
    public init() {
        guard let encoder = spoor_encoder_new() else {
            fatalError("Spoor: out of memory creating an event encoder")
        }
        self.encoder = encoder
    }

    deinit {
        spoor_encoder_free(encoder)
        scratch.text.deallocate()
        scratch.props.deallocate()
        scratch.listOffsets.deallocate()
        scratch.packed.deallocate()
    }

    /// Returns the encoding of `event`.
    public func encode(_ event: Event) throws(EncodeError) -> [UInt8] {
        var out: [UInt8] = []
        try append(event, to: &out)
        return out
    }

    /// Appends the encoding of `event` to `buffer`.
    ///
    /// On error `buffer` is left as it was.
    public func append(_ event: Event, to buffer: inout [UInt8]) throws(EncodeError) {
        try encode(event, into: &buffer, entryTag: nil)
    }

    /// Appends `event` as one entry of a protobuf `Batch` (field 1, length-delimited) to `buffer`.
    ///
    /// Any concatenation of batch entries is a valid `spoor.v1.Batch` message.
    /// On error `buffer` is left as it was.
    public func appendBatchEntry(_ event: Event, to buffer: inout [UInt8]) throws(EncodeError) {
        try encode(event, into: &buffer, entryTag: Self.eventsTag)
    }

    /// Appends `event` followed by `suffix` as one entry of a protobuf `Batch` to `buffer`.
    ///
    /// `suffix` is more encoded fields of the same event, such as `properties` entries encoded once and
    /// spliced into many events (a protobuf map may come in several runs); it must not repeat a field the
    /// event has. The entry reaches `buffer` in one copy. On error `buffer` is left as it was.
    public func appendBatchEntry(_ event: Event, suffix: [UInt8], to buffer: inout [UInt8]) throws(EncodeError) {
        try encode(event, into: &buffer, entryTag: Self.eventsTag, suffix: suffix)
    }

    /// Appends `context` followed by `suffix` as one entry of `Batch.contexts` (field 2) to `buffer`: a context
    /// holds what many events share (ids, lib, presets and super properties) and events refer to it with
    /// `context` (see `Batch` in `proto/spoor/v1/event.proto`). Fields left at their default (an empty name,
    /// time 0, type and lib method unspecified) are not written. On error `buffer` is left as it was.
    public func appendContextEntry(_ context: Event, suffix: [UInt8], to buffer: inout [UInt8]) throws(EncodeError) {
        try encode(context, into: &buffer, entryTag: Self.contextsTag, suffix: suffix)
    }

    /// The tag of a `Batch.events` entry (field 1, length-delimited).
    static let eventsTag: UInt8 = 0x0A
    /// The tag of a `Batch.contexts` entry (field 2, length-delimited).
    static let contextsTag: UInt8 = 0x12

    /// Appends the header of a `Batch.events` entry, the tag `0x0A` and `bodyLength` as a varint, to `buffer`;
    /// the entry's body, an encoded event of that length, must follow. For callers that assemble an event's
    /// bytes themselves.
    public static func appendBatchEntryHeader(bodyLength: Int, to buffer: inout [UInt8]) {
        buffer.append(0x0A)
        Varint.append(UInt64(bodyLength), to: &buffer)
    }

    private func encode(
        _ event: Event, into buffer: inout [UInt8], entryTag: UInt8?, suffix: [UInt8] = []
    ) throws(EncodeError) {
        // Work on a local: every access to a class's stored property is checked for exclusivity
        // at run time, which cost a quarter of the encoding time when `store` appended to them.
        var scratch = Scratch()
        swap(&scratch, &self.scratch)
        defer { swap(&scratch, &self.scratch) }
        try scratch.encode(event, with: encoder, into: &buffer, entryTag: entryTag, suffix: suffix)
    }

    /// The strings, properties and list items of one event, flattened for the C shim.
    private struct Scratch {
        /// NUL-terminated UTF-8 of every string of the event; offset 0 is "".
        var text = TextBlock()
        var props = ScratchList<spoor_prop_in>()
        var listOffsets = ScratchList<UInt32>()
        /// Where protobuf-c packs the event, with room for its batch entry header before it.
        var packed = ScratchList<UInt8>()

        mutating func encode(
            _ event: Event, with encoder: OpaquePointer, into buffer: inout [UInt8], entryTag: UInt8?,
            suffix: [UInt8]
        ) throws(EncodeError) {
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
            if text.hasEmbeddedNUL { throw Self.embeddedNULError(in: event) }

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
            guard let offset = text.append(string) else { throw Self.tooLarge(field) }
            return offset
        }

        @inline(never)
        static func tooLarge(_ field: StaticString) -> EncodeError {
            EncodeError(field: "\(field)", reason: "event larger than 4 GiB")
        }

        /// Finds the first string with a NUL, in the order `encode` stores them.
        static func embeddedNULError(in event: Event) -> EncodeError {
            func error(_ field: String) -> EncodeError {
                EncodeError(field: field, reason: "contains U+0000, which protobuf-c strings cannot hold")
            }
            let fields: [(String, String?)] = [
                ("event", event.name), ("distinct_id", event.distinctID), ("anonymous_id", event.anonymousID),
                ("login_id", event.loginID), ("session_id", event.sessionID), ("original_id", event.originalID),
                ("lib.lib", event.lib.lib), ("lib.lib_version", event.lib.libVersion),
                ("lib.app_version", event.lib.appVersion),
            ]
            for case let (field, value?) in fields where value.utf8.contains(0) { return error(field) }
            for (key, value) in event.properties {
                if key.utf8.contains(0) { return error("properties.key") }
                switch value {
                case .string(let string) where string.utf8.contains(0):
                    return error("properties.value.string_value")
                case .list(let items) where items.contains(where: { $0.utf8.contains(0) }):
                    return error("properties.value.list_value.values")
                default:
                    continue
                }
            }
            return error("event")
        }
    }
}
