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

    /// An event whose strings pass 4 GiB (the protobuf-c path's offsets are 32-bit; the Swift path keeps its bound).
    @inline(never)
    static func tooLarge(_ field: StaticString) -> EncodeError {
        EncodeError(field: "\(field)", reason: "event larger than 4 GiB")
    }

    /// The error for an event with a string holding a NUL: the first such string, in the order the encoders store
    /// them.
    static func embeddedNUL(in event: Event) -> EncodeError {
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

/// Encodes events as protobuf `spoor.v1.Event` messages.
///
/// With the package's `SystemLibraries` trait (the default on Linux) protobuf-c packs them; on Apple platforms, or
/// without the trait, Swift writes the same bytes (docs/wire-paths.md).
///
/// An encoder keeps its scratch memory between calls, so once it has seen
/// events of a given shape, encoding more allocates nothing but the growth
/// of the output buffer. It is not safe to share between threads: give each
/// writer its own.
public final class EventEncoder {
    /// Which implementation encodes.
    @_spi(Testing) public let path: WirePath
    /// The Swift path's scratch, kept for its capacity.
    private var writer = EventWriter()
    #if SPOOR_SYSTEM_LIBRARIES
    /// The protobuf-c path's flat input and encoder, kept for their capacity.
    private var protobufC: ProtobufCEncoding?
    #endif

    /// Creates an encoder.
    public convenience init() {
        self.init(path: .standard)
    }

    /// Creates an encoder that encodes with `path`.
    @_spi(Testing) public init(path: WirePath) {
        self.path = path
        #if SPOOR_SYSTEM_LIBRARIES
        protobufC = path == .protobufC ? ProtobufCEncoding() : nil
        #endif
    }

    deinit {
        writer.deallocate()
        #if SPOOR_SYSTEM_LIBRARIES
        protobufC?.deallocate()
        #endif
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

    /// The tag of a `Batch.events` entry.
    static var eventsTag: UInt8 { BatchField.events.tag }
    /// The tag of a `Batch.contexts` entry.
    static var contextsTag: UInt8 { BatchField.contexts.tag }

    /// Appends the header of a `Batch.events` entry, the tag `0x0A` and `bodyLength` as a varint, to `buffer`;
    /// the entry's body, an encoded event of that length, must follow. For callers that assemble an event's
    /// bytes themselves.
    package static func appendBatchEntryHeader(bodyLength: Int, to buffer: inout [UInt8]) {
        buffer.append(eventsTag)
        Varint.append(UInt64(bodyLength), to: &buffer)
    }

    private func encode(
        _ event: Event, into buffer: inout [UInt8], entryTag: UInt8?, suffix: [UInt8] = []
    ) throws(EncodeError) {
        // Work on a local: every access to a class's stored property is checked for exclusivity
        // at run time, which cost a quarter of the encoding time when `store` appended to them.
        #if SPOOR_SYSTEM_LIBRARIES
        if var scratch = protobufC {
            protobufC = nil
            defer { protobufC = scratch }
            try scratch.encode(event, into: &buffer, entryTag: entryTag, suffix: suffix)
            return
        }
        #endif
        var writer = EventWriter()
        swap(&writer, &self.writer)
        defer { swap(&writer, &self.writer) }
        try writer.encode(event, into: &buffer, entryTag: entryTag, suffix: suffix)
    }
}
