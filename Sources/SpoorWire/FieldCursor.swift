/// Walks the top-level fields of one protobuf message, one at a time, checking each key and each value's bounds
/// before anything is read: the one field walk for every part of Spoor that looks at encoded events or batches
/// without decoding them (finding an event's `context`, a batch's entries, an event's `properties` entries).
///
/// Hostile bytes give a ``DecodeError`` (the kind, the caller's field name and the offset from the start of the
/// bytes), never a crash or a read past the end. The rules are the decoders': a key is a varint of at most ten
/// bytes whose field number is 1 through 2²⁹ − 1 and whose wire type is 0, 1, 2 or 5; a varint is cut off
/// (`truncated`) or longer than ten bytes (`overlongVarint`); a length that reaches past the end is
/// `lengthPastEnd`; a fixed-width value cut off is `truncated`.
///
/// The decoders themselves (the C scan and ``ViewReader``) keep their own walks: they read every field into a view
/// in one pass, which a cursor handing out fields would only slow down.
package struct FieldCursor {
    /// The largest field number protobuf allows (2²⁹ − 1).
    package static let maxFieldNumber: UInt64 = 536_870_911

    /// A field's key: its number, its wire type and where it starts.
    package struct Key: Sendable {
        /// The field number.
        package var number: UInt64
        /// How the value is written.
        package var wireType: WireType
        /// The key's offset from the start of the bytes.
        package var offset: Int

        /// The `Event` field this key names, nil for a number `Event` does not have.
        package var eventField: EventField? { EventField(rawValue: number) }
    }

    /// One whole field.
    package struct Field: Sendable {
        /// The field's key.
        package var key: Key
        /// A varint's value, a fixed-width value's bits (little-endian) or a length-delimited field's length.
        package var value: UInt64
        /// The value's bytes: the varint, the fixed-width bytes or, for a length-delimited field, the bytes the
        /// length counts (without the length).
        package var body: Range<Int>

        /// The whole field, key first.
        package var range: Range<Int> { key.offset..<body.upperBound }
        /// The field number.
        package var number: UInt64 { key.number }
        /// How the value is written.
        package var wireType: WireType { key.wireType }
        /// The `Event` field this is, nil for a number `Event` does not have.
        package var eventField: EventField? { key.eventField }
    }

    private let start: UnsafeRawPointer?
    private let end: UnsafeRawPointer?
    private var at: UnsafeRawPointer?

    /// A cursor over `bytes`, from `offset` (the start by default) to the end.
    package init(_ bytes: UnsafeRawBufferPointer, from offset: Int = 0) {
        start = bytes.baseAddress
        end = bytes.baseAddress.map { $0 + bytes.count }
        at = bytes.baseAddress.map { $0 + min(max(0, offset), bytes.count) }
    }

    /// Where the next key starts, from the start of the bytes.
    package var offset: Int {
        guard let at, let start else { return 0 }
        return at - start
    }

    /// Whether every field has been read.
    package var isAtEnd: Bool {
        guard let at, let end else { return true }
        return at >= end
    }

    /// Reads the next key, or nil at the end.
    ///
    /// - Parameter message: the name errors give as the field (the message being walked).
    /// - Throws: ``DecodeError`` `truncated` or `overlongVarint` for a broken key, `invalidTag` for field number 0,
    ///   a number past 2²⁹ − 1 or a wire type other than 0, 1, 2 and 5 (the detail is the key).
    @inline(__always)
    package mutating func nextKey(in message: StaticString) throws(DecodeError) -> Key? {
        guard var position = at, let end, position < end else { return nil }
        let keyAt = position
        guard let raw = Varint.read(&position, end) else { throw error(Varint.failure(at: keyAt, end), message, keyAt, 0) }
        let number = raw >> 3
        guard number != 0, number <= Self.maxFieldNumber, let wireType = WireType(rawValue: raw & 7),
              wireType != .startGroup, wireType != .endGroup
        else { throw error(.invalidTag, message, keyAt, raw) }
        at = position
        return Key(number: number, wireType: wireType, offset: keyAt - start!)
    }

    /// Reads the value of `key`, the key just read, and moves past it.
    ///
    /// - Parameter field: the name errors give as the field.
    /// - Throws: ``DecodeError`` `truncated` or `overlongVarint` for a broken varint or length, `lengthPastEnd` for
    ///   a length past the end (the detail is the length), `truncated` for a fixed-width value cut off (the detail
    ///   is its width).
    @inline(__always)
    package mutating func value(of key: Key, field: StaticString) throws(DecodeError) -> Field {
        guard var position = at, let end, let start else { throw error(.truncated, field, nil, 0) }
        let valueAt = position
        switch key.wireType {
        case .varint:
            guard let value = Varint.read(&position, end) else { throw error(Varint.failure(at: valueAt, end), field, valueAt, 0) }
            at = position
            return Field(key: key, value: value, body: valueAt - start..<position - start)
        case .fixed64, .fixed32:
            let width = key.wireType == .fixed64 ? 8 : 4
            guard width <= end - position else { throw error(.truncated, field, valueAt, UInt64(width)) }
            let value = width == 8 ? UInt64(littleEndian: position.loadUnaligned(as: UInt64.self))
                : UInt64(UInt32(littleEndian: position.loadUnaligned(as: UInt32.self)))
            at = position + width
            return Field(key: key, value: value, body: valueAt - start..<valueAt - start + width)
        case .lengthDelimited:
            guard let length = Varint.read(&position, end) else { throw error(Varint.failure(at: valueAt, end), field, valueAt, 0) }
            guard length <= UInt64(end - position) else { throw error(.lengthPastEnd, field, valueAt, length) }
            at = position + Int(length)
            return Field(key: key, value: length, body: position - start..<position - start + Int(length))
        case .startGroup, .endGroup:
            // `nextKey` never hands these out.
            throw error(.invalidTag, field, valueAt, key.number << 3 | key.wireType.rawValue)
        }
    }

    /// Reads the next whole field, or nil at the end: ``nextKey(in:)`` then ``value(of:field:)``, with `message` as
    /// the field name of every error.
    @inline(__always)
    package mutating func next(in message: StaticString) throws(DecodeError) -> Field? {
        guard let key = try nextKey(in: message) else { return nil }
        return try value(of: key, field: message)
    }

    @inline(never)
    private func error(_ kind: DecodeError.Kind, _ field: StaticString, _ position: UnsafeRawPointer?, _ detail: UInt64) -> DecodeError {
        let offset = position.flatMap { position in start.map { position - $0 } } ?? 0
        return DecodeError(kind: kind, field: "\(field)", offset: offset, detail: detail)
    }
}

extension FieldCursor {
    /// Runs `body` with a cursor over `bytes`.
    package static func withCursor<Result>(
        over bytes: [UInt8], _ body: (inout FieldCursor) throws(DecodeError) -> Result
    ) throws(DecodeError) -> Result {
        try bytes.withUnsafeBytes { raw in
            Swift.Result { () throws(DecodeError) -> Result in
                var cursor = FieldCursor(raw)
                return try body(&cursor)
            }
        }.get()
    }
}
