/// The walk over a `Batch`'s entries in Swift: the C shim's `spoor_batch_next_field` rule for rule, so both paths
/// find the same entries and report broken framing with the same error.
enum BatchEntries {
    /// The next entry of Batch field `field` from `offset`; `nil` when no entry remains (or the next is an empty one at
    /// the very end).
    /// Other fields, known or not, are skipped after their bounds are checked.
    static func next(
        inBatch bytes: UnsafeRawBufferPointer, from offset: Int, field: BatchField
    ) throws(DecodeError) -> (body: Range<Int>, next: Int)? {
        let path: StaticString = field == .contexts ? "contexts" : "events"
        var cursor = FieldCursor(bytes, from: offset)
        while let key = try cursor.nextKey(in: path) {
            // Both known Batch fields (events, contexts) are messages.
            if let known = BatchField(rawValue: key.number), key.wireType != .lengthDelimited {
                throw DecodeError(kind: .wrongWireType, field: known == .contexts ? "contexts" : "events", offset: key.offset,
                                  detail: key.wireType.rawValue)
            }
            let value = try cursor.value(of: key, field: key.wireType == .varint ? "batch" : path)
            // An empty entry that ends the batch ends the walk like the batch's end, as it always has.
            if key.number == field.rawValue {
                return value.body.lowerBound == bytes.count ? nil : (value.body, cursor.offset)
            }
        }
        return nil
    }
}
