/// The walk over a `Batch`'s entries in Swift: the C shim's `spoor_batch_next_field` rule for rule, so both paths
/// find the same entries and report broken framing with the same error.
enum BatchEntries {
    /// The next entry of Batch field `field` (1 events, 2 contexts) from `offset`; `nil` when no entry remains (or
    /// the next is an empty one at the very end).
    /// Other fields, known or not, are skipped after their bounds are checked.
    static func next(
        inBatch bytes: UnsafeRawBufferPointer, from offset: Int, field: UInt32
    ) throws(DecodeError) -> (body: Range<Int>, next: Int)? {
        guard let start = bytes.baseAddress else { return nil }
        let end = start + bytes.count
        let path: StaticString = field == 2 ? "contexts" : "events"
        func error(_ kind: DecodeError.Kind, _ field: StaticString, _ at: UnsafeRawPointer, _ detail: UInt64) -> DecodeError {
            DecodeError(kind: kind, field: "\(field)", offset: at - start, detail: detail)
        }
        func varint(_ at: inout UnsafeRawPointer, _ field: StaticString) throws(DecodeError) -> UInt64 {
            guard let value = Varint.read(&at, end) else { throw error(Varint.failure(at: at, end), field, at, 0) }
            return value
        }
        var at = start + offset
        while at < end {
            let tagAt = at
            let key = try varint(&at, path)
            let number = key >> 3, wire = key & 7
            guard number != 0, number <= 536_870_911, wire != 3, wire != 4, wire <= 5 else {
                throw error(.invalidTag, path, tagAt, key)
            }
            // Both known Batch fields (events, contexts) are messages.
            if number == 1 || number == 2, wire != 2 {
                throw error(.wrongWireType, number == 2 ? "contexts" : "events", tagAt, wire)
            }
            let valueAt = at
            let length: UInt64
            switch wire {
            case 0:
                _ = try varint(&at, "batch")
                continue
            case 1: length = 8
            case 5: length = 4
            default: length = try varint(&at, path)
            }
            guard length <= UInt64(end - at) else { throw error(wire == 2 ? .lengthPastEnd : .truncated, path, valueAt, length) }
            let body = at - start
            at += Int(length)
            // An empty entry that ends the batch ends the walk like the batch's end, as it always has.
            if number == UInt64(field) { return body == bytes.count ? nil : (body..<body + Int(length), at - start) }
        }
        return nil
    }
}
