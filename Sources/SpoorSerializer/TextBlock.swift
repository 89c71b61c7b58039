/// The NUL-terminated UTF-8 strings of one event, back to back, as the C shim reads them.
///
/// Plain memory rather than an `Array`: an event copies a dozen or more strings, and
/// `Array.append`'s uniqueness and capacity checks cost more than the copies themselves.
/// The block is owned by one encoder, moved but never copied, and freed with ``deallocate()``.
struct TextBlock {
    /// The first byte; offset 0 always holds a lone NUL, the empty string.
    private(set) var base: UnsafeMutablePointer<UInt8>?
    /// The bytes in use.
    private(set) var count = 0
    private var capacity = 0
    /// How many strings were appended since the last reset.
    private(set) var strings = 0

    /// Empties the block, leaving only the empty string at offset 0.
    mutating func reset() {
        count = 0
        strings = 0
        reserve(1024)
        base![0] = 0
        count = 1
    }

    /// Appends `string` and its NUL and returns its offset, or `nil` when the block would
    /// pass 4 GiB (the shim's offsets are 32-bit).
    @inline(__always)
    mutating func append(_ string: String) -> UInt32? {
        let length = string.utf8.count
        let offset = count
        guard length < Int(UInt32.max) - offset else { return nil }
        reserve(offset + length + 1)
        let target = base! + offset
        if string.utf8.withContiguousStorageIfAvailable({ target.update(from: $0.baseAddress!, count: length) }) == nil {
            var string = string
            string.withUTF8 { target.update(from: $0.baseAddress!, count: length) }
        }
        target[length] = 0
        count = offset + length + 1
        strings += 1
        return UInt32(offset)
    }

    /// Whether some string holds a NUL of its own: the block then has more NULs than terminators.
    var hasEmbeddedNUL: Bool {
        guard let base else { return false }
        return Self.zeroBytes(in: UnsafeRawBufferPointer(start: base, count: count)) != strings + 1
    }

    /// Frees the memory; the block is empty afterwards.
    mutating func deallocate() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }

    /// Makes room for `needed` bytes in all.
    @inline(__always)
    private mutating func reserve(_ needed: Int) {
        if needed > capacity { grow(to: needed) }
    }

    /// Grows the block; like `Array`, it traps when memory runs out.
    @inline(never)
    private mutating func grow(to needed: Int) {
        var grown = max(capacity * 2, 1024)
        while grown < needed { grown *= 2 }
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        if let base {
            memory.update(from: base, count: count)
            base.deallocate()
        }
        base = memory
        capacity = grown
    }

    /// Counts the zero bytes eight at a time: in each byte of `(w & 0x7F…) + 0x7F… | w`
    /// the top bit is clear exactly when that byte of `w` is zero, and no carry crosses bytes.
    static func zeroBytes(in bytes: UnsafeRawBufferPointer) -> Int {
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var zeros = 0
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            zeros += (~(((word & low) &+ low) | word) & ~low).nonzeroBitCount
            index += 8
        }
        while index < bytes.count {
            if bytes[index] == 0 { zeros += 1 }
            index += 1
        }
        return zeros
    }
}
