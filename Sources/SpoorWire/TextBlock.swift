internal import CSpoorViews

/// The NUL-terminated UTF-8 strings of one event, back to back, as the C shim reads them.
///
/// A ``ScratchList`` rather than an `Array`: an event copies a dozen or more strings. The block is owned by one
/// encoder, moved but never copied, and freed with ``deallocate()``.
package struct TextBlock {
    private var bytes = ScratchList<UInt8>()

    /// An empty block; ``reset()`` prepares it for an event.
    package init() {}
    /// The first byte; offset 0 always holds a lone NUL, the empty string.
    package var base: UnsafeMutablePointer<UInt8>? { bytes.base }
    /// The bytes in use.
    package var count: Int { bytes.count }
    /// How many strings were appended since the last reset.
    private(set) var strings = 0

    /// Empties the block, leaving only the empty string at offset 0.
    package mutating func reset() {
        bytes.removeAll()
        strings = 0
        bytes.append(0)
    }

    /// Appends `string` and its NUL and returns its offset, or `nil` when the block would
    /// pass 4 GiB (the shim's offsets are 32-bit).
    @inline(__always)
    package mutating func append(_ string: String) -> UInt32? {
        // One look at the string's representation: its bytes and their count come together.
        if let offset = string.utf8.withContiguousStorageIfAvailable({ append(bytes: $0) }) { return offset }
        var string = string
        return string.withUTF8 { append(bytes: $0) }
    }

    @inline(__always)
    private mutating func append(bytes string: UnsafeBufferPointer<UInt8>) -> UInt32? {
        let offset = count
        guard string.count < Int(UInt32.max) - offset else { return nil }
        bytes.reserve(offset + string.count + 1)
        bytes.append(contentsOf: string)
        bytes.append(0)
        strings += 1
        return UInt32(offset)
    }

    /// Whether some string holds a NUL of its own: the block then has more NULs than terminators.
    package var hasEmbeddedNUL: Bool {
        guard let base else { return false }
        return Self.zeroBytes(in: UnsafeRawBufferPointer(start: base, count: count)) != strings + 1
    }

    /// Frees the memory; the block is empty afterwards.
    package mutating func deallocate() { bytes.deallocate() }

    /// Counts the zero bytes (in C, sixteen at a time: a word-at-a-time count in Swift cost 6 % of an
    /// encoding).
    package static func zeroBytes(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return spoor_count_zero_bytes(base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }
}
