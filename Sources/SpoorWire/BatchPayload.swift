/// What a batch frame's payload holds, and the one place that knows it: a run of protobuf `Batch` entries, each an
/// event (`Batch.events`, key `0A`) or a context (`Batch.contexts`, key `12`), each a one-byte key, a varint length
/// and that many bytes.
///
/// A log record's payload is exactly one such entry, so the same rules tell a context record from an event record.
/// Events refer to contexts by number (1 + the context's index among the payload's contexts), wherever the
/// contexts stand; Spoor writes them first. Anything else (another field, a key written in more than one byte, a
/// length past the end) makes the payload malformed.
package struct BatchPayload: Sendable {
    /// What an entry is.
    package enum Kind: Sendable, Hashable {
        /// A `Batch.events` entry: one event, whole or extending a context.
        case event
        /// A `Batch.contexts` entry: what events share, never an event itself.
        case context

        /// The entry's field in `Batch`.
        package var field: BatchField { self == .event ? .events : .contexts }
        /// The entry's one-byte key.
        package var tag: UInt8 { field.tag }

        /// The kind whose key is `tag`, nil for any other byte.
        package init?(tag: UInt8) {
            switch tag {
            case BatchField.events.tag: self = .event
            case BatchField.contexts.tag: self = .context
            default: return nil
            }
        }
    }

    /// One entry of the payload.
    package struct Entry: Sendable, Hashable {
        /// An event or a context.
        package var kind: Kind
        /// The whole entry, key and length included.
        package var range: Range<Int>
        /// The encoded `Event` message.
        package var body: Range<Int>
    }

    /// The payload's bytes.
    package let bytes: [UInt8]
    /// Its entries, in order.
    package let entries: [Entry]

    /// Reads the entries of `bytes`.
    ///
    /// - Throws: ``FrameError`` `malformedPayload` (field `payload`) for anything but a run of whole entries.
    package init(_ bytes: [UInt8]) throws(FrameError) {
        var entries: [Entry] = []
        try Self.walk(bytes) { entry in entries.append(entry) }
        self.bytes = bytes
        self.entries = entries
    }

    private init(bytes: [UInt8], entries: [Entry]) {
        self.bytes = bytes
        self.entries = entries
    }

    /// How many events the payload holds (its records; contexts are not records).
    package var eventCount: Int { entries.reduce(0) { $0 + ($1.kind == .event ? 1 : 0) } }

    /// Whether the payload holds any context.
    package var hasContexts: Bool { entries.contains { $0.kind == .context } }

    /// The number of events in `bytes`, checked as ``init(_:)`` checks them, without keeping the entries.
    package static func eventCount(_ bytes: [UInt8]) throws(FrameError) -> Int {
        var count = 0
        try walk(bytes) { entry in if entry.kind == .event { count += 1 } }
        return count
    }

    /// The kind of `record`, a log record's payload, when it is exactly one entry (key, length, that many bytes);
    /// nil when it holds anything else.
    package static func kind(ofRecord record: UnsafeRawBufferPointer) -> Kind? {
        guard record.count >= 2, let kind = Kind(tag: record[0]) else { return nil }
        var index = 1
        guard let length = Varint.read(record, at: &index), length == UInt64(record.count - index) else { return nil }
        return kind
    }

    /// The payload cut in two for a collector that found it too large: the first `eventCount / 2` events, then
    /// the rest, each behind every context of the payload in its order (so each event's `context` number names
    /// the same context), byte for byte as they are here. Nil when the payload holds fewer than two events.
    package func halves() -> (first: BatchPayload, second: BatchPayload)? {
        let events = entries.filter { $0.kind == .event }
        guard events.count > 1 else { return nil }
        let contexts = entries.filter { $0.kind == .context }
        let middle = events.count / 2
        func part(_ members: ArraySlice<Entry>) -> BatchPayload {
            var bytes: [UInt8] = []
            bytes.reserveCapacity((contexts + members).reduce(0) { $0 + $1.range.count })
            var entries: [Entry] = []
            entries.reserveCapacity(contexts.count + members.count)
            for entry in contexts + members {
                let start = bytes.count
                bytes.append(contentsOf: self.bytes[entry.range])
                let shift = start - entry.range.lowerBound
                entries.append(Entry(
                    kind: entry.kind, range: start..<bytes.count,
                    body: entry.body.lowerBound + shift..<entry.body.upperBound + shift))
            }
            return BatchPayload(bytes: bytes, entries: entries)
        }
        return (part(events[..<middle]), part(events[middle...]))
    }

    /// Hands every entry of `bytes` to `body`, in order, or throws at the first damage.
    private static func walk(_ bytes: [UInt8], _ body: (Entry) -> Void) throws(FrameError) {
        func malformed(_ reason: String) -> FrameError { FrameError(.malformedPayload, field: "payload", reason: reason) }
        try bytes.withBytes { raw throws(FrameError) in
            var cursor = FieldCursor(raw)
            while !cursor.isAtEnd {
                let start = cursor.offset
                // One-byte keys only: Spoor's writers never write another, and the decoders' walks need not follow.
                guard let kind = Kind(tag: raw[start]), let key = try? cursor.nextKey(in: "payload") else {
                    throw malformed("byte \(start) is not a Batch.events or Batch.contexts tag")
                }
                let value: FieldCursor.Field
                do throws(DecodeError) {
                    value = try cursor.value(of: key, field: "payload")
                } catch {
                    throw error.kind == .lengthPastEnd
                        ? malformed("the record whose length is at byte \(start + 1) runs past the payload")
                        : malformed("a record length at byte \(start + 1) is cut off or too long")
                }
                body(Entry(kind: kind, range: start..<value.body.upperBound, body: value.body))
            }
        }
    }
}
