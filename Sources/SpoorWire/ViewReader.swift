internal import CSpoorViews

/// The Swift decoder: one pass over an event's bytes that fills the same `spoor_event_view` the protobuf-c decoder
/// fills, its strings pointing into the input instead of copied into an arena.
///
/// It applies every rule the C path applies, in the same order, so that it accepts the same bytes, builds the same
/// view and, for bytes it refuses, throws the same ``DecodeError`` (kind, field, offset, detail):
///
/// - the C scan's checks (docs/wire-format.md, "Rules a decoder enforces"): tags, wire types, varints, lengths,
///   strict UTF-8 without NUL, the limits, enums no `int32` encodes to, non-finite doubles, property values,
///   skipping unknown fields after their bounds are checked; the first problem in wire order is the one reported;
/// - protobuf-c's reading of what the scan passed: a singular field keeps its last value on the wire (an explicit
///   empty string or zero included), a repeated `lib` merges field by field, an entry's repeated `value` and a
///   value's repeated oneof member keep the last one whole (two `list_value`s are not concatenated), properties
///   stay in wire order; a tag or length prefix written in more than five bytes is refused (`unpackFailed`);
/// - then an event without a type is refused, as the C shim does after unpacking.
///
/// The C path's `outOfMemory` has no counterpart: its arena is sized from the input (96 bytes a byte) above what
/// the densest input needs, and this pass allocates at most one property view and one list item per two input bytes.
/// Both configurations use this pass: without protobuf-c it is the decoder; with it, it reads the views
/// (``EventDecoder/forEachEventView(inBatch:_:)``) that it accepts, and protobuf-c decodes the rest. The tests and
/// `FuzzWirePaths` hold the two to the same views and errors.
///
/// An event over a shared context is merged by presence (a field the event's bytes hold replaces the context's, a
/// `lib` merges field by field, the context's properties come first): exactly what parsing the context's bytes
/// followed by the event's gives. Where that merge cannot decide alone (either message refused, a limit passed
/// only by the two together, no type), ``read(_:overContext:into:)`` says so and the caller decodes the merged bytes.
struct ViewReader {
    /// What one message (an event or a context) held on the wire.
    struct Fields {
        /// Bit `n` set: field `n` of `Event` was on the wire; bits 16 + `n`: field `n` of `Lib`.
        var present: UInt32 = 0
        var event = spoor_str_view()
        var distinctID = spoor_str_view()
        var anonymousID = spoor_str_view()
        var loginID = spoor_str_view()
        var sessionID = spoor_str_view()
        var originalID = spoor_str_view()
        var lib = spoor_str_view()
        var libVersion = spoor_str_view()
        var appVersion = spoor_str_view()
        var type: Int32 = 0
        var method: Int32 = 0
        var context: UInt32 = 0
        var time: Int64 = 0
        var timeOffset: Int64 = 0
        var sequenceOffset: Int64 = 0
        var trackID: UInt64 = 0
        var sequence: UInt64 = 0
        /// The message's properties: `propertyCount` views from `propertyStart` in the list they were read into.
        var propertyStart = 0
        var propertyCount = 0
        /// False when protobuf-c would refuse bytes the checks passed: a tag or length prefix over five bytes.
        var unpackable = true
    }

    /// The current event's property views, and its list items; reserved before reading so nothing moves.
    private var properties = ScratchList<spoor_prop_view>()
    private var items = ScratchList<spoor_str_view>()
    /// The context read once per batch, its properties and list items kept apart from the events'.
    private var contextProperties = ScratchList<spoor_prop_view>()
    private var contextItems = ScratchList<spoor_str_view>()
    private var context = Fields()
    /// Which of the batch's contexts `context` holds, or nil.
    private(set) var contextIndex: Int?
    /// A context of the batch that cannot be merged by presence: its events take the merged bytes.
    private(set) var refusedContext: Int?
    /// Bytes of the context last read, for the size limit of an event over it.
    private var contextBytes = 0

    /// The limits, none below zero.
    let limits: DecodeLimits

    init(limits: DecodeLimits) {
        self.limits = DecodeLimits(
            maxEventBytes: max(0, limits.maxEventBytes), maxProperties: max(0, limits.maxProperties),
            maxStringBytes: max(0, limits.maxStringBytes), maxListLength: max(0, limits.maxListLength))
    }

    mutating func deallocate() {
        properties.deallocate()
        items.deallocate()
        contextProperties.deallocate()
        contextItems.deallocate()
    }

    /// Forgets the context (a new batch).
    mutating func resetContext() {
        contextIndex = nil
        refusedContext = nil
    }

    /// Decodes one whole event (no context merged under it) into `view`, valid until the next call; throws what the
    /// C decoder throws for the same bytes, its offset counted from the start of `bytes`.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, into view: inout spoor_event_view) throws(DecodeError) {
        guard bytes.count <= limits.maxEventBytes else {
            throw DecodeError(kind: .eventTooLarge, field: "event", offset: 0, detail: UInt64(bytes.count))
        }
        properties.removeAll()
        items.removeAll()
        let fields = try Self.read(bytes, limits: limits, properties: &properties, items: &items)
        guard fields.unpackable else {
            throw DecodeError(kind: .unpackFailed, field: "event", offset: 0, detail: UInt64(bytes.count))
        }
        // A proto3 event without a type decodes as unspecified, which is refused.
        guard fields.type != 0 else { throw DecodeError(kind: .invalidEnum, field: "type", offset: 0) }
        view = makeView(fields)
    }

    /// Reads context `index` of the batch from `bytes`; `false` when its events cannot be merged over it by presence.
    mutating func readContext(_ bytes: UnsafeRawBufferPointer, index: Int) -> Bool {
        contextIndex = nil
        contextProperties.removeAll()
        contextItems.removeAll()
        guard bytes.count <= limits.maxEventBytes,
              let fields = try? Self.read(bytes, limits: limits, properties: &contextProperties, items: &contextItems),
              fields.unpackable
        else {
            refusedContext = index
            return false
        }
        context = fields
        contextBytes = bytes.count
        contextIndex = index
        return true
    }

    /// Reads one event, over the context last read when `overContext`, into `view`; `false` when the bytes are
    /// refused or the merge needs the merged bytes (the caller then decodes those, which gives the view or the
    /// exact error).
    mutating func read(_ bytes: UnsafeRawBufferPointer, overContext: Bool, into view: inout spoor_event_view) -> Bool {
        let contextLength = overContext ? context.propertyCount : 0
        properties.removeAll()
        items.removeAll()
        if overContext {
            // The context's bytes count toward the event's size, as they do in the merged bytes.
            guard contextIndex != nil, bytes.count <= limits.maxEventBytes,
                  contextBytes <= limits.maxEventBytes - bytes.count else { return false }
            if contextLength > 0, let base = contextProperties.base {
                properties.append(contentsOf: UnsafeBufferPointer(start: base, count: contextLength))
            }
        } else {
            guard bytes.count <= limits.maxEventBytes else { return false }
        }
        guard var own = try? Self.read(bytes, limits: limits, properties: &properties, items: &items),
              own.unpackable, contextLength + own.propertyCount <= limits.maxProperties
        else { return false }
        if overContext { own = Self.merge(context, under: own) }
        guard own.type != 0 else { return false }
        view = makeView(own)
        return true
    }

    /// The view of `fields`, its properties the ones read last.
    private func makeView(_ fields: Fields) -> spoor_event_view {
        var view = spoor_event_view()
        view.event = fields.event
        view.type = fields.type
        view.time = Int64(bitPattern: UInt64(bitPattern: fields.time) &+ UInt64(bitPattern: fields.timeOffset))
        view.track_id = fields.trackID
        view.sequence = fields.sequence &+ UInt64(bitPattern: fields.sequenceOffset)
        view.context = fields.context
        view.distinct_id = fields.distinctID
        view.anonymous_id = fields.anonymousID
        view.login_id = fields.loginID
        view.session_id = fields.sessionID
        view.original_id = fields.originalID
        view.lib = fields.lib
        view.lib_version = fields.libVersion
        view.app_version = fields.appVersion
        view.lib_method = fields.method
        view.props = UnsafePointer(properties.base)
        view.prop_count = properties.count
        return view
    }

    /// `own` over `shared`: each field of `own` that was on the wire, else `shared`'s.
    private static func merge(_ shared: Fields, under own: Fields) -> Fields {
        var merged = own
        func pick<Value>(_ bit: UInt32, _ path: WritableKeyPath<Fields, Value>) {
            if own.present & (1 << bit) == 0, shared.present & (1 << bit) != 0 { merged[keyPath: path] = shared[keyPath: path] }
        }
        pick(1, \.event)
        pick(2, \.type)
        pick(3, \.time)
        pick(4, \.trackID)
        pick(5, \.sequence)
        pick(6, \.distinctID)
        pick(7, \.anonymousID)
        pick(8, \.loginID)
        pick(11, \.sessionID)
        pick(12, \.originalID)
        pick(13, \.context)
        pick(14, \.timeOffset)
        pick(15, \.sequenceOffset)
        pick(17, \.lib)
        pick(18, \.libVersion)
        pick(19, \.method)
        pick(20, \.appVersion)
        merged.present = own.present | shared.present
        return merged
    }

    /// The fields of the message in `bytes`, its properties and list items appended to the lists given; throws the
    /// C scan's first error.
    private static func read(
        _ bytes: UnsafeRawBufferPointer, limits: DecodeLimits,
        properties: inout ScratchList<spoor_prop_view>, items: inout ScratchList<spoor_str_view>
    ) throws(DecodeError) -> Fields {
        guard let start = bytes.baseAddress else { return Fields(propertyStart: properties.count) }
        // Each entry and each list item takes at least two bytes: reserving that many keeps pointers still.
        properties.reserve(properties.count + bytes.count / 2 + 1)
        items.reserve(items.count + bytes.count / 2 + 1)
        var walk = Walk(start: start, limits: limits)
        walk.fields.propertyStart = properties.count
        swap(&walk.properties, &properties)
        swap(&walk.items, &items)
        defer {
            swap(&walk.properties, &properties)
            swap(&walk.items, &items)
        }
        try walk.event(start, start + bytes.count)
        var fields = walk.fields
        fields.propertyCount = walk.properties.count - fields.propertyStart
        // List items were appended behind their property's back; their addresses are final now.
        if let base = walk.items.base, let first = walk.properties.base {
            for index in fields.propertyStart..<walk.properties.count where first[index].kind == UInt32(SPOOR_KIND_LIST) {
                first[index].list = UnsafePointer(base + Int(first[index].integer))
                first[index].integer = 0
            }
        }
        return fields
    }
}

// MARK: - The pass over the wire

/// One pass over one message and those nested in it: the C scan's checks in its order, and protobuf-c's reading.
private struct Walk {
    /// The first byte of the message: offsets in errors count from here.
    let start: UnsafeRawPointer
    let limits: DecodeLimits
    var fields = Fields()
    var properties = ScratchList<spoor_prop_view>()
    var items = ScratchList<spoor_str_view>()
    /// Entries seen so far, for the property limit.
    var entries = 0

    typealias Fields = ViewReader.Fields

    init(start: UnsafeRawPointer, limits: DecodeLimits) {
        self.start = start
        self.limits = limits
    }

    /// A property's value as protobuf-c reads it: the last oneof member on the wire.
    struct Value {
        var kind: UInt32 = 0
        var integer: Int64 = 0
        var real: Double = 0
        var string = spoor_str_view()
        var listStart = 0
        var listCount = 0
    }

    // MARK: Messages

    mutating func event(_ begin: UnsafeRawPointer, _ end: UnsafeRawPointer) throws(DecodeError) {
        var at = begin
        while at < end {
            let tagAt = at
            let key = try tag(&at, end, in: "event")
            let number = key >> 3, wire = key & 7
            switch number {
            case 1: fields.event = try string(&at, end, wire, tagAt, "event")
            case 2: fields.type = try enumValue(&at, end, wire, tagAt, "type")
            case 3: fields.time = Int64(bitPattern: try varint(&at, end, wire, tagAt, "time"))
            case 4: fields.trackID = try fixed64(&at, end, wire, tagAt, "track_id")
            case 5: fields.sequence = try varint(&at, end, wire, tagAt, "sequence")
            case 6: fields.distinctID = try string(&at, end, wire, tagAt, "distinct_id")
            case 7: fields.anonymousID = try string(&at, end, wire, tagAt, "anonymous_id")
            case 8: fields.loginID = try string(&at, end, wire, tagAt, "login_id")
            case 9:
                let (body, bodyEnd) = try message(&at, end, wire, tagAt, "lib")
                try lib(body, bodyEnd)
            case 10:
                let (body, bodyEnd) = try message(&at, end, wire, tagAt, "properties")
                entries += 1
                guard entries <= limits.maxProperties else {
                    throw error(.tooManyProperties, "properties", tagAt, UInt64(entries))
                }
                properties.append(try entry(body, bodyEnd))
            case 11: fields.sessionID = try string(&at, end, wire, tagAt, "session_id")
            case 12: fields.originalID = try string(&at, end, wire, tagAt, "original_id")
            // protobuf-c keeps the low 32 bits of a uint32 written wider.
            case 13: fields.context = UInt32(truncatingIfNeeded: try varint(&at, end, wire, tagAt, "context"))
            case 14: fields.timeOffset = zigZag(try varint(&at, end, wire, tagAt, "time_offset"))
            case 15: fields.sequenceOffset = zigZag(try varint(&at, end, wire, tagAt, "sequence_offset"))
            default:
                try skip(&at, end, wire, "event")
                continue
            }
            fields.present |= 1 << UInt32(number)
        }
    }

    /// A `Lib` message; its fields merge into `fields`: each keeps its last value on the wire, over every `lib`.
    mutating func lib(_ begin: UnsafeRawPointer, _ end: UnsafeRawPointer) throws(DecodeError) {
        var at = begin
        while at < end {
            let tagAt = at
            let key = try tag(&at, end, in: "lib")
            let number = key >> 3, wire = key & 7
            switch number {
            case 1: fields.lib = try string(&at, end, wire, tagAt, "lib.lib")
            case 2: fields.libVersion = try string(&at, end, wire, tagAt, "lib.lib_version")
            case 3: fields.method = try enumValue(&at, end, wire, tagAt, "lib.method")
            case 4: fields.appVersion = try string(&at, end, wire, tagAt, "lib.app_version")
            default:
                try skip(&at, end, wire, "lib")
                continue
            }
            fields.present |= 1 << UInt32(16 + number)
        }
    }

    /// A properties entry: its last key and its last value, whole.
    mutating func entry(_ begin: UnsafeRawPointer, _ end: UnsafeRawPointer) throws(DecodeError) -> spoor_prop_view {
        var property = spoor_prop_view()
        var value: Value?
        var at = begin
        while at < end {
            let tagAt = at
            let key = try tag(&at, end, in: "properties")
            switch key >> 3 {
            case 1: property.key = try string(&at, end, key & 7, tagAt, "properties.key")
            case 2:
                let (body, bodyEnd) = try message(&at, end, key & 7, tagAt, "properties.value")
                value = try self.value(body, bodyEnd)
            default: try skip(&at, end, key & 7, "properties")
            }
        }
        guard let value else { throw error(.missingValue, "properties", begin, 0) }
        property.kind = value.kind
        switch Int(value.kind) {
        case Int(SPOOR_KIND_STRING): property.str = value.string
        case Int(SPOOR_KIND_DOUBLE): property.real = value.real
        // The list's start, until its items stop moving (see `ViewReader.read`).
        case Int(SPOOR_KIND_LIST): property.integer = Int64(value.listStart); property.list_count = value.listCount
        default: property.integer = value.integer
        }
        return property
    }

    /// A `Value`: the last member of its oneof on the wire replaces any before it.
    mutating func value(_ begin: UnsafeRawPointer, _ end: UnsafeRawPointer) throws(DecodeError) -> Value {
        var value = Value()
        var at = begin
        while at < end {
            let tagAt = at
            let key = try tag(&at, end, in: "properties.value")
            let number = key >> 3, wire = key & 7
            var member = Value()
            switch number {
            case 1: member.string = try string(&at, end, wire, tagAt, "properties.value.string_value")
            case 2: member.integer = zigZag(try varint(&at, end, wire, tagAt, "properties.value.int_value"))
            case 3: member.real = try double(&at, end, wire, tagAt, "properties.value.double_value")
            case 4: member.integer = try varint(&at, end, wire, tagAt, "properties.value.bool_value") == 0 ? 0 : 1
            case 5: member.integer = zigZag(try varint(&at, end, wire, tagAt, "properties.value.date_value"))
            case 6:
                let (body, bodyEnd) = try message(&at, end, wire, tagAt, "properties.value.list_value")
                (member.listStart, member.listCount) = try list(body, bodyEnd)
            default:
                try skip(&at, end, wire, "properties.value")
                continue
            }
            member.kind = UInt32(number)
            value = member
        }
        guard value.kind != 0 else { throw error(.missingValue, "properties.value", begin, 0) }
        return value
    }

    /// A `StringList`: its items are appended to `items`; returns where they start and how many there are.
    mutating func list(_ begin: UnsafeRawPointer, _ end: UnsafeRawPointer) throws(DecodeError) -> (Int, Int) {
        let first = items.count
        var at = begin
        while at < end {
            let tagAt = at
            let key = try tag(&at, end, in: "properties.value.list_value")
            guard key >> 3 == 1 else {
                try skip(&at, end, key & 7, "properties.value.list_value")
                continue
            }
            let item = try string(&at, end, key & 7, tagAt, "properties.value.list_value.values")
            guard items.count - first < limits.maxListLength else {
                throw error(.listTooLong, "properties.value.list_value.values", tagAt, UInt64(items.count - first + 1))
            }
            items.append(item)
        }
        return (first, items.count - first)
    }

    // MARK: Fields

    /// Reads a tag and checks it: field number 1 through 2²⁹ − 1, wire type 0, 1, 2 or 5.
    @inline(__always)
    mutating func tag(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, in message: StaticString) throws(DecodeError) -> UInt64 {
        let tagAt = at
        let key = try readVarint(&at, end, message)
        let number = key >> 3, wire = key & 7
        guard number != 0, number <= 536_870_911, wire != 3, wire != 4, wire <= 5 else {
            throw error(.invalidTag, message, tagAt, key)
        }
        // protobuf-c reads a tag in at most five bytes.
        if at - tagAt > 5 { fields.unpackable = false }
        return key
    }

    /// Skips an unknown field after checking its bounds.
    mutating func skip(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ message: StaticString) throws(DecodeError) {
        let valueAt = at
        switch wire {
        case 0: _ = try readVarint(&at, end, message)
        case 1:
            guard end - at >= 8 else { throw error(.truncated, message, valueAt, 8) }
            at += 8
        case 5:
            guard end - at >= 4 else { throw error(.truncated, message, valueAt, 4) }
            at += 4
        default: _ = try length(&at, end, message)
        }
    }

    @inline(__always)
    mutating func varint(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ tagAt: UnsafeRawPointer, _ path: StaticString
    ) throws(DecodeError) -> UInt64 {
        guard wire == 0 else { throw error(.wrongWireType, path, tagAt, wire) }
        return try readVarint(&at, end, path)
    }

    /// An enum's value as protobuf-c keeps it (an `int32`); one no `int32` encodes to is refused.
    @inline(__always)
    mutating func enumValue(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ tagAt: UnsafeRawPointer, _ path: StaticString
    ) throws(DecodeError) -> Int32 {
        let valueAt = at
        let value = try varint(&at, end, wire, tagAt, path)
        let signed = Int64(bitPattern: value)
        guard signed >= Int64(Int32.min), signed <= Int64(Int32.max) else { throw error(.invalidEnum, path, valueAt, value) }
        return Int32(signed)
    }

    @inline(__always)
    mutating func fixed64(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ tagAt: UnsafeRawPointer, _ path: StaticString
    ) throws(DecodeError) -> UInt64 {
        guard wire == 1 else { throw error(.wrongWireType, path, tagAt, wire) }
        guard end - at >= 8 else { throw error(.truncated, path, at, 8) }
        let value = UInt64(littleEndian: at.loadUnaligned(as: UInt64.self))
        at += 8
        return value
    }

    @inline(__always)
    mutating func double(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ tagAt: UnsafeRawPointer, _ path: StaticString
    ) throws(DecodeError) -> Double {
        let valueAt = at
        let value = Double(bitPattern: try fixed64(&at, end, wire, tagAt, path))
        guard value.isFinite else { throw error(.nonFiniteDouble, path, valueAt, 0) }
        return value
    }

    /// A nested message's bounds.
    @inline(__always)
    mutating func message(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ tagAt: UnsafeRawPointer, _ path: StaticString
    ) throws(DecodeError) -> (UnsafeRawPointer, UnsafeRawPointer) {
        guard wire == 2 else { throw error(.wrongWireType, path, tagAt, wire) }
        let body = try length(&at, end, path)
        return (body, at)
    }

    /// A string the C scan accepts: within the length limit, strict UTF-8, no NUL.
    @inline(__always)
    mutating func string(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ wire: UInt64, _ tagAt: UnsafeRawPointer, _ path: StaticString
    ) throws(DecodeError) -> spoor_str_view {
        guard wire == 2 else { throw error(.wrongWireType, path, tagAt, wire) }
        let valueAt = at
        let body = try length(&at, end, path)
        let count = at - body
        guard count <= limits.maxStringBytes else { throw error(.stringTooLong, path, valueAt, UInt64(count)) }
        let bytes = UnsafeRawBufferPointer(start: body, count: count)
        if !UTF8Check.isPlain(bytes) {
            if let bad = UTF8Check.firstInvalid(bytes) { throw error(.invalidUTF8, path, body + bad, 0) }
            let nul = bytes.firstIndex(of: 0) ?? 0
            throw error(.embeddedNUL, path, body + nul, 0)
        }
        return spoor_str_view(ptr: body.assumingMemoryBound(to: CChar.self), len: count)
    }

    /// Reads a length prefix, checks that the bytes it counts are there, moves `at` past them and returns their start.
    @inline(__always)
    mutating func length(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ path: StaticString) throws(DecodeError) -> UnsafeRawPointer {
        let valueAt = at
        let length = try readVarint(&at, end, path)
        guard length <= UInt64(end - at) else { throw error(.lengthPastEnd, path, valueAt, length) }
        // protobuf-c reads a length prefix in at most five bytes.
        if at - valueAt > 5 { fields.unpackable = false }
        let body = at
        at += Int(length)
        return body
    }

    @inline(__always)
    func readVarint(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ path: StaticString) throws(DecodeError) -> UInt64 {
        guard let value = Varint.read(&at, end) else { throw error(Varint.failure(at: at, end), path, at, 0) }
        return value
    }

    @inline(never)
    func error(_ kind: DecodeError.Kind, _ field: StaticString, _ at: UnsafeRawPointer, _ detail: UInt64) -> DecodeError {
        DecodeError(kind: kind, field: "\(field)", offset: at - start, detail: detail)
    }
}

@inline(__always)
private func zigZag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
}

/// Strict UTF-8, as both decoders check it: no overlong forms, no surrogates, nothing past U+10FFFF, no cut
/// sequence.
enum UTF8Check {
    /// Whether `bytes` is strict UTF-8 without NUL, eight ASCII bytes at a time: the common case, answered fast.
    static func isPlain(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        var index = 0
        let count = bytes.count
        while index < count {
            if count - index >= 8 {
                let word = start.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                // All ASCII and no zero byte: the classic has-zero-byte test on the word.
                let zero = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
                if (word | zero) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                    continue
                }
            }
            let byte = start.load(fromByteOffset: index, as: UInt8.self)
            if byte < 0x80 {
                guard byte != 0 else { return false }
                index += 1
                continue
            }
            guard let length = sequenceLength(start, index, count) else { return false }
            index += length
        }
        return true
    }

    /// Where the first sequence that is not strict UTF-8 starts, or nil when all is (NUL is valid UTF-8).
    static func firstInvalid(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let start = bytes.baseAddress else { return nil }
        var index = 0
        while index < bytes.count {
            if start.load(fromByteOffset: index, as: UInt8.self) < 0x80 {
                index += 1
                continue
            }
            guard let length = sequenceLength(start, index, bytes.count) else { return index }
            index += length
        }
        return nil
    }

    /// The length of the multi-byte sequence at `index`, or nil when it is not strict UTF-8.
    @inline(__always)
    private static func sequenceLength(_ start: UnsafeRawPointer, _ index: Int, _ count: Int) -> Int? {
        let byte = start.load(fromByteOffset: index, as: UInt8.self)
        let need: Int
        var scalar: UInt32
        switch byte {
        case 0xC2...0xDF: need = 1; scalar = UInt32(byte & 0x1F)
        case 0xE0...0xEF: need = 2; scalar = UInt32(byte & 0x0F)
        case 0xF0...0xF4: need = 3; scalar = UInt32(byte & 0x07)
        default: return nil
        }
        guard count - index > need else { return nil }
        for offset in 1...need {
            let next = start.load(fromByteOffset: index + offset, as: UInt8.self)
            guard next & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(next & 0x3F)
        }
        if need == 2, scalar < 0x800 || (0xD800...0xDFFF).contains(scalar) { return nil }
        if need == 3, scalar < 0x10000 || scalar > 0x10FFFF { return nil }
        return need + 1
    }
}
