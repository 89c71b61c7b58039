import SpoorModel

/// The retired second way of storing what events share, kept to make the frames it wrote for the tests of every
/// reader: nothing in Spoor writes them any more.
///
/// Before context records existed in the log, a sealer could factor a batch of whole events at seal time (an
/// option, off by default: `sharedContext` of `BatchFrame.encode`, `UploadConfiguration` and `spoor encode
/// --frames --shared-context`). It moved the fields that a run of consecutive events has byte for byte in common
/// into one `Batch.contexts` entry (an `Event` message with only those fields, a base time and a base sequence),
/// and left each event its own fields, a `context` reference and the differences of its time and sequence from the
/// bases. Frames made that way may still wait in outboxes and stores, and they are the same wire format as context
/// records (several contexts per batch instead of one), so ``EventDecoder``, the collector and the tools read them
/// as they read any batch; this function makes such frames for their tests (`SharedContextTests` checks it against
/// the originals) and for the fuzzers. docs/wire-format.md, "Shared context".
@_spi(Testing) public enum LegacySharedContext {
    /// Rewrites `payload`, a protobuf `Batch` of plain `events` entries, so that its events refer to shared
    /// contexts; returns `payload` itself when there is nothing to share or it holds anything else
    /// (contexts already, unknown fields, bytes that are not a `Batch`), which then decodes as before.
    ///
    /// Events that cannot be factored exactly (a field repeated that protobuf merges by "last wins", a
    /// property key twice, offsets already set) are kept as they are, in their place.
    public static func factor(_ payload: [UInt8]) -> [UInt8] {
        guard let entries = eventEntries(payload), entries.count >= 2 else { return payload }
        // Fields are compared by a 64-bit fingerprint of their bytes; the bytes themselves are compared when
        // an event's field is left to its context, so a fingerprint collision can never change an event: the
        // batch is then kept as it is.
        var events = payload.withUnsafeBytes { raw in entries.map { Parsed(raw, $0) } }

        // Runs of consecutive eligible events with what they all share; a run ends when the next event
        // would shrink what is shared to less than half.
        var runs: [Run] = []
        var current: Run?
        for index in events.indices where events[index].isEligible {
            let event = events[index]
            if current != nil {
                var matched = 0, matchedBytes = 0
                for field in event.fields where field.isShareable && current!.shared.contains(field.fingerprint) {
                    matched += 1
                    matchedBytes += field.range.count
                }
                if matched == current!.shared.count {  // the usual case: everything shared is there
                    current!.members.append(index)
                    continue
                }
                if matched > 0, 2 * matchedBytes >= current!.sharedBytes {
                    var common: [Int] = []
                    common.reserveCapacity(matched)
                    for field in event.fields where field.isShareable && current!.shared.contains(field.fingerprint) {
                        if !common.contains(field.fingerprint) { common.append(field.fingerprint) }
                    }
                    current!.shared = common
                    current!.sharedBytes = matchedBytes
                    current!.members.append(index)
                    continue
                }
                runs.append(current!)
            }
            var shared: [Int] = []
            shared.reserveCapacity(event.fields.count)
            var sharedBytes = 0
            for field in event.fields where field.isShareable && !shared.contains(field.fingerprint) {
                shared.append(field.fingerprint)
                sharedBytes += field.range.count
            }
            current = Run(members: [index], shared: shared, sharedBytes: sharedBytes)
        }
        if let current { runs.append(current) }
        runs.removeAll { $0.members.count < 2 }
        guard !runs.isEmpty else { return payload }

        var contexts: [[UInt8]] = []
        for run in runs {
            let first = events[run.members[0]]
            // The shared fields in the first member's order, then the bases.
            var context: [UInt8] = []
            var sharedFields: [(fingerprint: Int, range: Range<Int>)] = []
            for field in first.fields where field.isShareable && run.shared.contains(field.fingerprint) {
                guard !sharedFields.contains(where: { $0.fingerprint == field.fingerprint }) else { return payload }
                sharedFields.append((field.fingerprint, field.range))
                context.append(contentsOf: payload[field.range])
            }
            let contextNumber = UInt64(contexts.count + 1)
            if first.time != 0 { Varint.appendField(EventField.time.rawValue, UInt64(bitPattern: first.time), to: &context) }
            if first.sequence != 0 { Varint.appendField(EventField.sequence.rawValue, first.sequence, to: &context) }
            contexts.append(context)
            for member in run.members {
                events[member].context = Reference(number: contextNumber, time: first.time, sequence: first.sequence, shared: sharedFields)
            }
        }

        var out: [UInt8] = []
        out.reserveCapacity(payload.count)
        for context in contexts { appendEntry(tag: BatchField.contexts.tag, context, to: &out) }
        var body: [UInt8] = []
        for event in events {
            guard let reference = event.context else {
                out.append(contentsOf: payload[event.entry])
                continue
            }
            body.removeAll(keepingCapacity: true)
            var left = 0
            for field in event.fields {
                if field.event == .time || field.event == .sequence { continue }
                if field.isShareable, let contextField = reference.shared.first(where: { $0.fingerprint == field.fingerprint })?.range {
                    // Exactly the context's bytes, or a fingerprint collision: then nothing is factored.
                    guard sameBytes(payload, field.range, contextField) else { return payload }
                    left += 1
                    continue
                }
                body.append(contentsOf: payload[field.range])
            }
            guard left == reference.shared.count else { return payload }
            Varint.appendField(EventField.context.rawValue, reference.number, to: &body)
            let timeOffset = event.time &- reference.time
            if timeOffset != 0 { Varint.appendField(EventField.timeOffset.rawValue, Varint.zigZag(timeOffset), to: &body) }
            let sequenceOffset = Int64(bitPattern: event.sequence &- reference.sequence)
            if sequenceOffset != 0 { Varint.appendField(EventField.sequenceOffset.rawValue, Varint.zigZag(sequenceOffset), to: &body) }
            appendEntry(tag: BatchField.events.tag, body, to: &out)
        }
        return out
    }

    // MARK: - The pieces

    private struct Run {
        var members: [Int]
        /// Fingerprints of the fields every member has (a few dozen: a linear search beats hashing them).
        var shared: [Int]
        var sharedBytes: Int
    }

    /// What a factored event refers to: its context's number and bases, and the context's fields by fingerprint.
    private struct Reference {
        var number: UInt64
        var time: Int64
        var sequence: UInt64
        var shared: [(fingerprint: Int, range: Range<Int>)]
    }

    private struct Field {
        var number: UInt64
        /// The whole field: tag, length or value.
        var range: Range<Int>
        /// A hash of the field's bytes, for shareable fields.
        var fingerprint = 0
        /// The `Event` field, nil for an unknown one.
        var event: EventField? { EventField(rawValue: number) }
        /// Identity, lib, session and each property entry.
        var isShareable: Bool {
            switch event {
            case .distinctID?, .anonymousID?, .loginID?, .lib?, .properties?, .sessionID?: true
            default: false
            }
        }
    }

    /// One event entry of the payload, split into its top-level fields.
    private struct Parsed {
        /// The whole `Batch.events` entry.
        var entry: Range<Int>
        var fields: [Field] = []
        var time: Int64 = 0
        var sequence: UInt64 = 0
        /// Whether the event can be split and merged back exactly.
        var isEligible = false
        /// The context it refers to once factored.
        var context: Reference?

        init(_ payload: UnsafeRawBufferPointer, _ entry: (entry: Range<Int>, body: Range<Int>)) {
            self.entry = entry.entry
            fields.reserveCapacity(32)
            var cursor = FieldCursor(UnsafeRawBufferPointer(rebasing: payload[..<entry.body.upperBound]), from: entry.body.lowerBound)
            var seen: UInt32 = 0  // singular fields met, by number
            var keys: [Int] = []  // hashes of the property keys; a false "twice" only keeps the event as it is
            keys.reserveCapacity(32)
            // A broken event is kept as it is.
            while let found = try? cursor.next(in: "event") {
                var field = Field(number: found.number, range: found.range)
                switch field.event {
                case .time? where found.wireType == .varint: time = Int64(bitPattern: found.value)
                case .sequence? where found.wireType == .varint: sequence = found.value
                // A property key twice would merge as "last wins", which moving entries could reorder.
                case .properties? where found.wireType == .lengthDelimited:
                    guard let key = Self.mapKeyHash(payload, in: found.body) else { return }
                    keys.append(key)
                case .context?, .timeOffset?, .sequenceOffset?: return  // already factored
                default: break
                }
                if field.event == .time || field.event == .sequence || (field.event != .properties && field.isShareable) {
                    // Singular fields merge as "last wins": exactly once, with the expected wire type.
                    let bit: UInt32 = 1 << UInt32(field.number)
                    let expected: WireType = field.event == .time || field.event == .sequence ? .varint : .lengthDelimited
                    guard seen & bit == 0, found.wireType == expected else { return }
                    seen |= bit
                } else if field.event == .properties, found.wireType != .lengthDelimited {
                    return
                }
                if field.isShareable { field.fingerprint = fingerprint(UnsafeRawBufferPointer(rebasing: payload[field.range])) }
                fields.append(field)
            }
            guard cursor.isAtEnd else { return }
            keys.sort()
            for position in keys.indices.dropFirst() where keys[position] == keys[position - 1] { return }
            isEligible = true
        }

        /// A hash of the key of a map entry (its field 1), or nil when the entry has two keys or is broken.
        static func mapKeyHash(_ payload: UnsafeRawBufferPointer, in range: Range<Int>) -> Int? {
            var cursor = FieldCursor(UnsafeRawBufferPointer(rebasing: payload[..<range.upperBound]), from: range.lowerBound)
            var found: Range<Int>?
            while !cursor.isAtEnd {
                guard let field = try? cursor.next(in: "properties") else { return nil }
                if field.number == PropertyEntryField.key.rawValue, field.wireType == .lengthDelimited {
                    guard found == nil else { return nil }
                    found = field.body
                }
            }
            return fingerprint(UnsafeRawBufferPointer(rebasing: payload[found ?? range.upperBound..<range.upperBound]))
        }
    }

    private static func sameBytes(_ payload: [UInt8], _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        return payload.withUnsafeBytes { raw in
            for offset in 0..<a.count where raw[a.lowerBound + offset] != raw[b.lowerBound + offset] { return false }
            return true
        }
    }

    /// A 64-bit hash of `bytes`, eight at a time (multiply and shift). Not collision-proof, and need not be:
    /// equal fingerprints are confirmed byte for byte before anything is factored.
    @inline(__always)
    private static func fingerprint(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0x243F_6A88_85A3_08D3 ^ UInt64(bytes.count)
        var index = 0
        while index + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            hash ^= hash >> 29
            index += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count {
            tail |= UInt64(bytes[index]) << shift
            shift += 8
            index += 1
        }
        hash = (hash ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// The `Batch.events` entries of `payload` (whole entry and the event's bytes), or nil when it holds
    /// anything else.
    private static func eventEntries(_ payload: [UInt8]) -> [(entry: Range<Int>, body: Range<Int>)]? {
        guard let batch = try? BatchPayload(payload), !batch.hasContexts else { return nil }
        return batch.entries.map { ($0.range, $0.body) }
    }

    private static func appendEntry(tag: UInt8, _ body: [UInt8], to buffer: inout [UInt8]) {
        buffer.append(tag)
        Varint.append(UInt64(body.count), to: &buffer)
        buffer.append(contentsOf: body)
    }
}
