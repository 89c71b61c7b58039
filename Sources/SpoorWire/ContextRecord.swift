package import SpoorModel

/// Encodes the two halves of the one shared-context mechanism Spoor writes: context records and the events that
/// extend them.
///
/// What nearly every event repeats (ids, lib, session, the preset and super properties) is written once, as a
/// context record: a `Batch.contexts` entry (``EventEncoder/appendContextEntry(_:suffix:to:)``) that holds only those
/// fields, a base time and a base sequence. Each event record then holds its own fields followed by the reference
/// this type encodes: `context = 1` ("extend the last context record before me") and its time and sequence as
/// offsets from the context's. Merging the event over its context by the rule of `Batch`
/// (proto/spoor/v1/event.proto, docs/wire-format.md) gives back the whole event. The log keeps a context record
/// before the records that extend it, and a sealed batch starts with it, so a batch's events always refer to its
/// first context.
package enum ContextRecord {
    /// The `context` an event record writes: 1 + the index of its batch's context entry, and a batch made from
    /// the log carries one context.
    package static let reference: UInt64 = 1

    /// Appends to `suffix` the fields that make an event extend the last context record before it: `context`,
    /// then `time_offset` and `sequence_offset` (`sint64`, left out at 0 as proto3 does).
    @inlinable
    package static func appendReference(timeOffset: Int64, sequenceOffset: Int64, to suffix: inout [UInt8]) {
        Varint.appendField(EventField.context.rawValue, reference, to: &suffix)
        if timeOffset != 0 { Varint.appendField(EventField.timeOffset.rawValue, Varint.zigZag(timeOffset), to: &suffix) }
        if sequenceOffset != 0 { Varint.appendField(EventField.sequenceOffset.rawValue, Varint.zigZag(sequenceOffset), to: &suffix) }
    }

    /// Appends the reference of an event recorded at `time` with `sequence` to a context recorded at
    /// `contextTime` with `contextSequence` (differences wrap, as the merge rule adds them back).
    @inlinable
    package static func appendReference(
        time: EpochMilliseconds, sequence: UInt64, contextTime: EpochMilliseconds, contextSequence: UInt64, to suffix: inout [UInt8]
    ) {
        appendReference(
            timeOffset: time &- contextTime, sequenceOffset: Int64(bitPattern: sequence &- contextSequence), to: &suffix)
    }

    /// The encoded `properties` entries (field `properties`, one length-delimited entry per key) of `properties`:
    /// the part of a context record, or of many events, that is encoded once and spliced in as a suffix.
    package static func propertyEntries(of properties: Properties, using encoder: EventEncoder) throws(EncodeError) -> [UInt8] {
        let carrier = Event(
            name: "", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .unspecified),
            properties: properties)
        let bytes = try encoder.encode(carrier)
        var entries: [UInt8] = []
        do {
            try FieldCursor.withCursor(over: bytes) { cursor throws(DecodeError) in
                while let field = try cursor.next(in: "event") {
                    if field.eventField == .properties, field.wireType == .lengthDelimited {
                        entries.append(contentsOf: bytes[field.range])
                    }
                }
            }
        } catch {
            // The encoder's own output: broken bytes here are a bug, reported as the encode error it amounts to.
            throw EncodeError(field: "properties", reason: "the encoded properties cannot be read back: \(error)")
        }
        return entries
    }
}
