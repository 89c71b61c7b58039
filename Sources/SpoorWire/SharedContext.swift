import SpoorModel

/// Stores what the events of a batch share once: the `Batch.contexts` of `proto/spoor/v1/event.proto`.
///
/// Nearly every event repeats its preset and super properties, identity, lib and session. ``factor(_:)``
/// moves the fields that a run of consecutive events has byte for byte in common into one context (an
/// `Event` message with only those fields, a base time and a base sequence), and leaves each event its
/// own fields, a `context` reference and the differences of its time and sequence from the bases. It works
/// on the encoded bytes: nothing is decoded or re-encoded, and the merge rule of `Batch` gives back every
/// event exactly (``EventDecoder`` applies it; `SharedContextTests` checks it against the originals).
public enum SharedContext {
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
            if first.time != 0 { Varint.appendField(3, UInt64(bitPattern: first.time), to: &context) }
            if first.sequence != 0 { Varint.appendField(5, first.sequence, to: &context) }
            contexts.append(context)
            for member in run.members {
                events[member].context = Reference(number: contextNumber, time: first.time, sequence: first.sequence, shared: sharedFields)
            }
        }

        var out: [UInt8] = []
        out.reserveCapacity(payload.count)
        for context in contexts { appendEntry(tag: 0x12, context, to: &out) }
        var body: [UInt8] = []
        for event in events {
            guard let reference = event.context else {
                out.append(contentsOf: payload[event.entry])
                continue
            }
            body.removeAll(keepingCapacity: true)
            var left = 0
            for field in event.fields {
                if field.number == 3 || field.number == 5 { continue }
                if field.isShareable, let contextField = reference.shared.first(where: { $0.fingerprint == field.fingerprint })?.range {
                    // Exactly the context's bytes, or a fingerprint collision: then nothing is factored.
                    guard sameBytes(payload, field.range, contextField) else { return payload }
                    left += 1
                    continue
                }
                body.append(contentsOf: payload[field.range])
            }
            guard left == reference.shared.count else { return payload }
            Varint.appendField(13, reference.number, to: &body)
            let timeOffset = event.time &- reference.time
            if timeOffset != 0 { Varint.appendField(14, Varint.zigZag(timeOffset), to: &body) }
            let sequenceOffset = Int64(bitPattern: event.sequence &- reference.sequence)
            if sequenceOffset != 0 { Varint.appendField(15, Varint.zigZag(sequenceOffset), to: &body) }
            appendEntry(tag: 0x0A, body, to: &out)
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
        /// Identity, lib, session and each property entry.
        var isShareable: Bool { number == 6 || number == 7 || number == 8 || number == 9 || number == 10 || number == 11 }
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
            var index = entry.body.lowerBound
            let end = entry.body.upperBound
            var seen: UInt32 = 0  // singular fields met, by number
            var keys: [Int] = []  // hashes of the property keys; a false "twice" only keeps the event as it is
            keys.reserveCapacity(32)
            while index < end {
                let start = index
                guard let key = Varint.read(payload[..<end], at: &index) else { return }
                let number = key >> 3
                switch key & 7 {
                case 0:
                    guard let value = Varint.read(payload[..<end], at: &index) else { return }
                    if number == 3 { time = Int64(bitPattern: value) }
                    if number == 5 { sequence = value }
                case 1: index += 8
                case 5: index += 4
                case 2:
                    guard let length = Varint.read(payload[..<end], at: &index), length <= UInt64(end - index) else { return }
                    index += Int(length)
                    // A property key twice would merge as "last wins", which moving entries could reorder.
                    if number == 10 {
                        guard let key = Self.mapKeyHash(payload, in: index - Int(length)..<index) else { return }
                        keys.append(key)
                    }
                default: return
                }
                guard index <= end else { return }
                if number >= 13 && number <= 15 { return }  // already factored
                var field = Field(number: number, range: start..<index)
                if number == 3 || number == 5 || (number != 10 && field.isShareable) {
                    // Singular fields merge as "last wins": exactly once, with the expected wire type.
                    let bit: UInt32 = 1 << UInt32(number)
                    let wire = key & 7
                    guard seen & bit == 0, wire == (number == 3 || number == 5 ? 0 : 2) else { return }
                    seen |= bit
                } else if number == 10, key & 7 != 2 {
                    return
                }
                if field.isShareable { field.fingerprint = fingerprint(UnsafeRawBufferPointer(rebasing: payload[field.range])) }
                fields.append(field)
            }
            keys.sort()
            for position in keys.indices.dropFirst() where keys[position] == keys[position - 1] { return }
            isEligible = true
        }

        /// A hash of the key of a map entry (its field 1), or nil when the entry has two keys or is broken.
        static func mapKeyHash(_ payload: UnsafeRawBufferPointer, in range: Range<Int>) -> Int? {
            var index = range.lowerBound
            var found: Range<Int>?
            while index < range.upperBound {
                guard let key = Varint.read(payload[..<range.upperBound], at: &index) else { return nil }
                switch key & 7 {
                case 0: guard Varint.read(payload[..<range.upperBound], at: &index) != nil else { return nil }
                case 1: index += 8
                case 5: index += 4
                case 2:
                    guard let length = Varint.read(payload[..<range.upperBound], at: &index), length <= UInt64(range.upperBound - index)
                    else { return nil }
                    if key >> 3 == 1 {
                        guard found == nil else { return nil }
                        found = index..<index + Int(length)
                    }
                    index += Int(length)
                default: return nil
                }
            }
            guard index == range.upperBound else { return nil }
            return fingerprint(UnsafeRawBufferPointer(rebasing: payload[found ?? index..<index]))
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
        var entries: [(entry: Range<Int>, body: Range<Int>)] = []
        var index = 0
        while index < payload.count {
            let start = index
            guard payload[index] == 0x0A else { return nil }
            index += 1
            guard let length = Varint.read(payload, at: &index),
                length <= UInt64(payload.count - index)
            else { return nil }
            entries.append((start..<index + Int(length), index..<index + Int(length)))
            index += Int(length)
        }
        return entries
    }

    private static func appendEntry(tag: UInt8, _ body: [UInt8], to buffer: inout [UInt8]) {
        buffer.append(tag)
        Varint.append(UInt64(body.count), to: &buffer)
        buffer.append(contentsOf: body)
    }
}
