/// Plain memory that grows and is kept: the encoder's scratch bytes.
///
/// Owned by one encoder, moved but never copied, and freed with ``deallocate()``; cheaper than an `Array`,
/// whose uniqueness and capacity checks cost more than the copies an encoder makes into it.
struct ByteBlock {
    /// The first byte, once something was reserved.
    private(set) var base: UnsafeMutablePointer<UInt8>?
    private(set) var capacity = 0

    /// Makes room for `needed` bytes, keeping the first `preserving` of those there were.
    @inline(__always)
    mutating func reserve(_ needed: Int, preserving: Int = 0) {
        if needed > capacity { grow(to: needed, preserving: preserving) }
    }

    /// Frees the memory.
    mutating func deallocate() {
        base?.deallocate()
        base = nil
        capacity = 0
    }

    /// Grows the block; like `Array`, it traps when memory runs out.
    @inline(never)
    private mutating func grow(to needed: Int, preserving: Int) {
        var grown = max(capacity * 2, 1024)
        while grown < needed { grown *= 2 }
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        if let base {
            memory.update(from: base, count: min(preserving, capacity))
            base.deallocate()
        }
        base = memory
        capacity = grown
    }
}
