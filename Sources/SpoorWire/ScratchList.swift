/// Plain memory holding a list of plain values: the encoder's scratch strings, properties and output.
///
/// Cheaper than an `Array`, whose uniqueness and capacity checks on each append cost more than the copies an
/// encoder makes. Owned by one encoder, moved but never copied, and freed with ``deallocate()``.
struct ScratchList<Element: BitwiseCopyable> {
    /// The first element, once memory was reserved.
    private(set) var base: UnsafeMutablePointer<Element>?
    /// The elements in use.
    private(set) var count = 0
    private var capacity = 0

    /// Empties the list, keeping its memory.
    mutating func removeAll() { count = 0 }

    /// Appends `element`.
    @inline(__always)
    mutating func append(_ element: Element) {
        reserve(count + 1)
        base![count] = element
        count += 1
    }

    /// Appends `elements`.
    @inline(__always)
    mutating func append(contentsOf elements: UnsafeBufferPointer<Element>) {
        guard !elements.isEmpty else { return }
        reserve(count + elements.count)
        if let source = elements.baseAddress { (base! + count).update(from: source, count: elements.count) }
        count += elements.count
    }

    /// Makes room for `needed` elements in all, keeping those in use.
    @inline(__always)
    mutating func reserve(_ needed: Int) {
        if needed > capacity { grow(to: needed) }
    }

    /// Frees the memory; the list is empty afterwards.
    mutating func deallocate() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }

    /// Grows the memory; like `Array`, it traps when memory runs out.
    @inline(never)
    private mutating func grow(to needed: Int) {
        var grown = max(capacity * 2, 1024 / MemoryLayout<Element>.stride)
        while grown < needed { grown *= 2 }
        let memory = UnsafeMutablePointer<Element>.allocate(capacity: grown)
        if let base {
            memory.update(from: base, count: count)
            base.deallocate()
        }
        base = memory
        capacity = grown
    }
}

extension ScratchList where Element == UInt8 {
    /// Appends `bytes`.
    @inline(__always)
    mutating func append(bytes: UnsafeRawBufferPointer) {
        append(contentsOf: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
    }
}
