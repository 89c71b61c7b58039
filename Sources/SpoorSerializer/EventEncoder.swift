internal import CSpoorProtobuf
public import SpoorCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why an event could not be encoded.
public struct EncodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field at fault, such as `event` or `properties.value.string_value`.
    public var field: String
    /// What is wrong with it.
    public var reason: String

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
        scratch.text.reserveCapacity(1024)
        scratch.props.reserveCapacity(32)
    }

    deinit {
        spoor_encoder_free(encoder)
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
        try encode(event, into: &buffer, asBatchEntry: false)
    }

    /// Appends `event` as one entry of a protobuf `Batch` (field 1, length-delimited) to `buffer`.
    ///
    /// Any concatenation of batch entries is a valid `spoor.v1.Batch` message.
    /// On error `buffer` is left as it was.
    public func appendBatchEntry(_ event: Event, to buffer: inout [UInt8]) throws(EncodeError) {
        try encode(event, into: &buffer, asBatchEntry: true)
    }

    private func encode(_ event: Event, into buffer: inout [UInt8], asBatchEntry: Bool) throws(EncodeError) {
        // Work on a local: every access to a class's stored property is checked for exclusivity
        // at run time, which cost a quarter of the encoding time when `store` appended to them.
        var scratch = Scratch()
        swap(&scratch, &self.scratch)
        defer { swap(&scratch, &self.scratch) }
        try scratch.encode(event, with: encoder, into: &buffer, asBatchEntry: asBatchEntry)
    }

    /// Writes the `Batch.events` tag and the length varint.
    private static func appendBatchEntryHeader(size: Int, to buffer: inout [UInt8]) {
        buffer.append(0x0A)
        var length = UInt64(size)
        while length >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: length) | 0x80)
            length >>= 7
        }
        buffer.append(UInt8(length))
    }

    /// The strings, properties and list items of one event, flattened for the C shim.
    private struct Scratch {
        /// NUL-terminated UTF-8 of every string of the event; offset 0 is "".
        var text: [UInt8] = [0]
        var props: [spoor_prop_in] = []
        var listOffsets: [UInt32] = []

        mutating func encode(
            _ event: Event, with encoder: OpaquePointer, into buffer: inout [UInt8], asBatchEntry: Bool
        ) throws(EncodeError) {
            text.removeAll(keepingCapacity: true)
            text.append(0)
            props.removeAll(keepingCapacity: true)
            listOffsets.removeAll(keepingCapacity: true)

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

            // The prepared message points into `text`, `listOffsets` and `props`:
            // prepare and pack inside one borrow of all three.
            let start = buffer.count
            let (size, written) = text.withUnsafeBufferPointer { text in
                listOffsets.withUnsafeBufferPointer { lists in
                    props.withUnsafeBufferPointer { props in
                        input.text = UnsafeRawPointer(text.baseAddress!).assumingMemoryBound(to: CChar.self)
                        input.list_offsets = lists.baseAddress
                        input.props = props.baseAddress
                        input.prop_count = props.count
                        let size = spoor_encoder_prepare(encoder, &input)
                        guard size > 0 else { return (0, 0) }
                        if asBatchEntry { EventEncoder.appendBatchEntryHeader(size: size, to: &buffer) }
                        let bodyStart = buffer.count
                        buffer.append(contentsOf: repeatElement(0, count: size))
                        let written = buffer.withUnsafeMutableBufferPointer { out in
                            spoor_encoder_pack(encoder, out.baseAddress! + bodyStart)
                        }
                        return (size, written)
                    }
                }
            }
            guard size > 0, written == size else {
                buffer.removeSubrange(start...)
                throw EncodeError(field: "event", reason: size == 0 ? "out of memory" : "packed \(written) bytes, expected \(size)")
            }
        }

        /// Copies `string` with its NUL into `text` and returns its offset.
        @inline(__always)
        mutating func store(_ string: String, _ field: StaticString) throws(EncodeError) -> UInt32 {
            if string.isEmpty { return 0 }
            let offset = text.count
            guard offset < Int(UInt32.max) - string.utf8.count else {
                throw EncodeError(field: "\(field)", reason: "event larger than 4 GiB")
            }
            var string = string
            let clean = string.withUTF8 { utf8 in
                if memchr(utf8.baseAddress!, 0, utf8.count) != nil { return false }
                text.append(contentsOf: utf8)
                return true
            }
            guard clean else {
                throw EncodeError(field: "\(field)", reason: "contains U+0000, which protobuf-c strings cannot hold")
            }
            text.append(0)
            return UInt32(offset)
        }
    }
}
