import SpoorWire

/// Where records go while the disk fails: held in memory, oldest first, each with the context in effect for it,
/// until the disk works again. Also what the log knows of the failure (when to retry, the last error). A value
/// the log keeps under its state lock; it touches no file.
package struct MemoryFallback {
    /// An event record held in memory, with the context in effect for it.
    package struct Record {
        package var framed: [UInt8]
        package var context: [UInt8]?
    }

    /// Held records from `start` on; the slots before it are emptied, and reclaimed now and then.
    private var records: [Record] = []
    private var start = 0
    /// The framed bytes held.
    package private(set) var bytes = 0

    /// The disk failed; appends go to memory until `retryAt`.
    package var diskFailing = false
    package var retryAt: Int64 = 0
    /// The last disk failure, for `sync()` to report.
    package var lastError: StorageError?
    /// The directory could not be set up at all: memory only, for good.
    package var memoryOnly = false

    package init() {}

    /// The number of records held.
    package var count: Int { records.count - start }

    /// The records held, oldest first.
    package var held: ArraySlice<Record> { records[start...] }

    /// The oldest record held.
    package var first: Record? { count > 0 ? records[start] : nil }

    /// Holds the event records of `group`, each with the context in effect for it (`leadingContext` until the
    /// group's own context records change it). Returns the number of event records held and their bytes.
    package mutating func keep(_ group: RecordBuffer, leadingContext: [UInt8]?) {
        var offset = 0
        var context = leadingContext
        group.bytes.withUnsafeBytes { raw in
            for size in group.sizes {
                let framed = Array(raw[offset..<offset + Int(size)])
                if RecordFormat.isContext(raw, at: offset) {
                    context = Array(framed[RecordFormat.headerSize...])
                } else {
                    records.append(Record(framed: framed, context: context))
                    bytes += framed.count
                }
                offset += Int(size)
            }
        }
    }

    /// The held records as framed bytes to write to a segment, with a context record in front of each record
    /// whose context differs from the one before it (as it went in front when appended). The first record's
    /// context is `leadingContext`, for the segment to restate.
    package func framed() -> (bytes: [UInt8], sizes: [UInt32], leadingContext: [UInt8]?) {
        var out: [UInt8] = []
        var sizes: [UInt32] = []
        out.reserveCapacity(bytes)
        let leading = first?.context
        var context = leading
        for record in held {
            if let next = record.context, next != context {
                let framed = RecordFormat.frame(next)
                out.append(contentsOf: framed)
                sizes.append(UInt32(framed.count))
            }
            context = record.context
            out.append(contentsOf: record.framed)
            sizes.append(UInt32(record.framed.count))
        }
        return (out, sizes, leading)
    }

    /// Removes the oldest record held and returns its framed size.
    @discardableResult
    package mutating func removeFirst() -> Int {
        let size = records[start].framed.count
        records[start] = Record(framed: [], context: nil)
        start += 1
        bytes -= size
        if start > 64 && start * 2 > records.count {
            records.removeFirst(start)
            start = 0
        }
        return size
    }

    /// Removes the oldest `n` records held (they reached a segment).
    package mutating func removeFirst(_ n: Int) {
        for _ in 0..<n { removeFirst() }
    }

    /// Puts back, in front, records a failed seal took.
    package mutating func restore(_ taken: [Record]) {
        records.replaceSubrange(start..<start, with: taken)
        bytes += taken.reduce(0) { $0 + $1.framed.count }
    }

    /// Forgets every record held (an erase).
    package mutating func removeAll() {
        records = []
        start = 0
        bytes = 0
    }
}
