/// Protobuf base-128 varints, read and written in one place for every module.
package enum Varint {
    /// The most bytes a 64-bit varint takes.
    package static let maxLength = 10

    /// Reads the varint at `index` and moves `index` past it; `nil` if it is cut off by the end of `bytes`, longer
    /// than ten bytes, or its tenth byte holds more than the 64th bit (then `index` is left anywhere). The C
    /// decoder applies the same rules, so both accept exactly the same varints.
    @inlinable
    package static func read<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: inout Bytes.Index) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            // The tenth byte carries bit 63 only; anything more does not fit 64 bits.
            if shift == 63, byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// Reads the varint at `at`, which must not run past `end`, and moves `at` past it; `nil` under the same rules
    /// as ``read(_:at:)`` (then `at` is left where it was). The decoders' walks over raw memory use this one.
    @inline(__always)
    package static func read(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer) -> UInt64? {
        guard at < end else { return nil }
        let first = at.load(as: UInt8.self)
        if first < 0x80 {
            at += 1
            return UInt64(first)
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var pointer = at
        while pointer < end, shift < 64 {
            let byte = pointer.load(as: UInt8.self)
            pointer += 1
            if shift == 63, byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                at = pointer
                return value
            }
            shift += 7
        }
        return nil
    }

    /// Why the varint at `at` cannot be read (``read(_:_:)`` gave `nil`): `truncated` when `end` comes within its
    /// first ten bytes, `overlongVarint` when it runs past ten bytes or its tenth holds more than bit 63.
    package static func failure(at: UnsafeRawPointer, _ end: UnsafeRawPointer) -> DecodeError.Kind {
        for index in 0..<maxLength {
            guard at + index < end else { return .truncated }
            if at.load(fromByteOffset: index, as: UInt8.self) < 0x80 { return .overlongVarint }
        }
        return .overlongVarint
    }

    /// Appends `value` as a varint.
    @inlinable
    package static func append(_ value: UInt64, to buffer: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    /// The bytes `value` takes as a varint.
    @inlinable
    package static func length(of value: UInt64) -> Int {
        var length = 1
        var value = value
        while value >= 0x80 {
            value >>= 7
            length += 1
        }
        return length
    }

    /// Writes `value` as a varint at `start`, which has room for ``length(of:)`` bytes, and returns the address
    /// just past it.
    @inlinable
    package static func write(_ value: UInt64, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var at = start
        var value = value
        while value >= 0x80 {
            at.pointee = UInt8(truncatingIfNeeded: value) | 0x80
            value >>= 7
            at += 1
        }
        at.pointee = UInt8(value)
        return at + 1
    }

    /// Appends a varint field (wire type 0): the key of field `number`, then `value`.
    @inlinable
    package static func appendField(_ number: UInt64, _ value: UInt64, to buffer: inout [UInt8]) {
        append(number << 3, to: &buffer)
        append(value, to: &buffer)
    }

    /// `value` as protobuf's `sint64` stores it: zigzag-mapped, so that small negative numbers stay short.
    @inlinable
    package static func zigZag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }
}
