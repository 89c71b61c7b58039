internal import CSpoorProtobuf

/// The views' fast path: one pass in Swift over an event's bytes that fills the same `spoor_event_view` the C
/// decoder fills, its strings pointing into the input instead of copied into an arena.
///
/// It takes only the plain shape every writer of Spoor events produces — known fields with their wire types,
/// valid strings, each property entry one key and one value — and says `false` for anything else, valid or not:
/// the caller then decodes through the C scan and protobuf-c, which give the view or the exact error. So the
/// path never refuses, and never accepts, what the C decoder would not; it is only faster (about 5× on
/// realistic events: no second parse, no arena, no copies, no `strlen`). `FuzzCollectorIngest` and the
/// collector's tests hold the two paths to the same views and errors.
///
/// Merging over a shared context is protobuf's rule read off presence: a field the event's bytes hold replaces
/// the context's, a `lib` merges field by field, the context's properties come first. That is what parsing the
/// context's bytes followed by the event's gives, including an event field that holds its default.
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
    /// A context of the batch found not to be of the plain shape: its events take the C path.
    private(set) var refusedContext: Int?
    /// Bytes of the context last read, for the size limit of an event over it.
    private var contextBytes = 0

    let limits: spoor_decode_limits

    init(limits: spoor_decode_limits) { self.limits = limits }

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

    /// Reads context `index` of the batch from `bytes`; `false` when it is not of the plain shape.
    mutating func readContext(_ bytes: UnsafeRawBufferPointer, index: Int) -> Bool {
        contextIndex = nil
        contextProperties.removeAll()
        contextItems.removeAll()
        guard bytes.count <= limits.max_event_bytes,
              let fields = Self.read(bytes, limits: limits, properties: &contextProperties, items: &contextItems)
        else {
            refusedContext = index
            return false
        }
        context = fields
        contextBytes = bytes.count
        contextIndex = index
        return true
    }

    /// Reads one event, over the context last read when `overContext`, into `view`; `false` when it is not of
    /// the plain shape or not valid (the caller then takes the C decoder's path).
    mutating func read(_ bytes: UnsafeRawBufferPointer, overContext: Bool, into view: inout spoor_event_view) -> Bool {
        let contextLength = overContext ? context.propertyCount : 0
        properties.removeAll()
        items.removeAll()
        if overContext {
            // The context's bytes count toward the event's size, as they do in the merged bytes.
            guard contextIndex != nil, bytes.count <= limits.max_event_bytes,
                  contextBytes <= limits.max_event_bytes - bytes.count else { return false }
            if contextLength > 0, let base = contextProperties.base {
                properties.append(contentsOf: UnsafeBufferPointer(start: base, count: contextLength))
            }
        } else {
            guard bytes.count <= limits.max_event_bytes else { return false }
        }
        guard var own = Self.read(bytes, limits: limits, properties: &properties, items: &items),
              contextLength + own.propertyCount <= limits.max_properties
        else { return false }
        if overContext { own = Self.merge(context, under: own) }
        // A proto3 event without a type decodes as unspecified, which is refused.
        guard own.type != 0 else { return false }
        view = spoor_event_view()
        view.event = own.event
        view.type = own.type
        view.time = Int64(bitPattern: UInt64(bitPattern: own.time) &+ UInt64(bitPattern: own.timeOffset))
        view.track_id = own.trackID
        view.sequence = own.sequence &+ UInt64(bitPattern: own.sequenceOffset)
        view.context = own.context
        view.distinct_id = own.distinctID
        view.anonymous_id = own.anonymousID
        view.login_id = own.loginID
        view.session_id = own.sessionID
        view.original_id = own.originalID
        view.lib = own.lib
        view.lib_version = own.libVersion
        view.app_version = own.appVersion
        view.lib_method = own.method
        view.props = UnsafePointer(properties.base)
        view.prop_count = properties.count
        return true
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

    // MARK: - One pass over the wire

    /// The fields of the message in `bytes`, its properties and list items appended to the lists given, or nil.
    private static func read(
        _ bytes: UnsafeRawBufferPointer, limits: spoor_decode_limits,
        properties: inout ScratchList<spoor_prop_view>, items: inout ScratchList<spoor_str_view>
    ) -> Fields? {
        var fields = Fields()
        guard let start = bytes.baseAddress else { return fields }
        // Each entry and each list item takes at least two bytes: reserving that many keeps pointers still.
        properties.reserve(properties.count + bytes.count / 2 + 1)
        items.reserve(items.count + bytes.count / 2 + 1)
        fields.propertyStart = properties.count
        var at = start
        let end = start + bytes.count
        while at < end {
            guard let key = readVarint(&at, end) else { return nil }
            let wire = key & 7
            switch key >> 3 {
            case 1: guard wire == 2, let text = readString(&at, end, limits) else { return nil }; fields.event = text
            case 2:
                guard wire == 0, let value = readVarint(&at, end), let type = int32(value) else { return nil }
                fields.type = type
            case 3: guard wire == 0, let value = readVarint(&at, end) else { return nil }; fields.time = Int64(bitPattern: value)
            case 4:
                guard wire == 1, end - at >= 8 else { return nil }
                fields.trackID = UInt64(littleEndian: at.loadUnaligned(as: UInt64.self))
                at += 8
            case 5: guard wire == 0, let value = readVarint(&at, end) else { return nil }; fields.sequence = value
            case 6: guard wire == 2, let text = readString(&at, end, limits) else { return nil }; fields.distinctID = text
            case 7: guard wire == 2, let text = readString(&at, end, limits) else { return nil }; fields.anonymousID = text
            case 8: guard wire == 2, let text = readString(&at, end, limits) else { return nil }; fields.loginID = text
            case 9: guard wire == 2, let body = readLength(&at, end), readLib(body, into: &fields, limits) else { return nil }
            case 10:
                guard wire == 2, let body = readLength(&at, end), properties.count - fields.propertyStart < limits.max_properties,
                      let property = readEntry(body, items: &items, limits)
                else { return nil }
                properties.append(property)
            case 11: guard wire == 2, let text = readString(&at, end, limits) else { return nil }; fields.sessionID = text
            case 12: guard wire == 2, let text = readString(&at, end, limits) else { return nil }; fields.originalID = text
            case 13:
                // The reference is read as 64 bits elsewhere: a value past 32 bits takes the C path.
                guard wire == 0, let value = readVarint(&at, end), value <= UInt64(UInt32.max) else { return nil }
                fields.context = UInt32(value)
            case 14: guard wire == 0, let value = readVarint(&at, end) else { return nil }; fields.timeOffset = zigZag(value)
            case 15: guard wire == 0, let value = readVarint(&at, end) else { return nil }; fields.sequenceOffset = zigZag(value)
            default: return nil  // unknown fields are rare: the C path keeps their rules
            }
            fields.present |= 1 << UInt32(truncatingIfNeeded: key >> 3)
        }
        fields.propertyCount = properties.count - fields.propertyStart
        // List items were appended behind their property's back; their addresses are final now.
        if let base = items.base, let first = properties.base {
            for index in fields.propertyStart..<properties.count where first[index].kind == UInt32(SPOOR_KIND_LIST) {
                first[index].list = UnsafePointer(base + Int(first[index].integer))
                first[index].integer = 0
            }
        }
        return fields
    }

    /// A `Lib` message; its fields merge into `fields` (a repeated `lib` keeps each field's last value).
    private static func readLib(_ body: UnsafeRawBufferPointer, into fields: inout Fields, _ limits: spoor_decode_limits) -> Bool {
        guard var at = body.baseAddress else { return true }
        let end = at + body.count
        while at < end {
            guard let key = readVarint(&at, end) else { return false }
            let wire = key & 7
            switch key >> 3 {
            case 1: guard wire == 2, let text = readString(&at, end, limits) else { return false }; fields.lib = text
            case 2: guard wire == 2, let text = readString(&at, end, limits) else { return false }; fields.libVersion = text
            case 3:
                guard wire == 0, let value = readVarint(&at, end), let method = int32(value) else { return false }
                fields.method = method
            case 4: guard wire == 2, let text = readString(&at, end, limits) else { return false }; fields.appVersion = text
            default: return false
            }
            fields.present |= 1 << UInt32(16 + (key >> 3))
        }
        return true
    }

    /// A properties entry of exactly one key and one value holding exactly one kind; a list's items go to `items`,
    /// and the view holds their start in `integer` until the event is read.
    private static func readEntry(
        _ body: UnsafeRawBufferPointer, items: inout ScratchList<spoor_str_view>, _ limits: spoor_decode_limits
    ) -> spoor_prop_view? {
        guard var at = body.baseAddress else { return nil }
        let end = at + body.count
        var property = spoor_prop_view()
        guard readVarint(&at, end) == 0x0A, let key = readString(&at, end, limits),
              readVarint(&at, end) == 0x12, let value = readLength(&at, end), at == end,
              var inner = value.baseAddress
        else { return nil }
        property.key = key
        let valueEnd = inner + value.count
        guard let valueKey = readVarint(&inner, valueEnd) else { return nil }
        let wire = valueKey & 7
        switch valueKey >> 3 {
        case 1:
            guard wire == 2, let text = readString(&inner, valueEnd, limits) else { return nil }
            property.str = text
        case 2, 5:
            guard wire == 0, let number = readVarint(&inner, valueEnd) else { return nil }
            property.integer = zigZag(number)
        case 3:
            guard wire == 1, valueEnd - inner >= 8 else { return nil }
            property.real = Double(bitPattern: UInt64(littleEndian: inner.loadUnaligned(as: UInt64.self)))
            guard property.real.isFinite else { return nil }
            inner += 8
        case 4:
            guard wire == 0, let flag = readVarint(&inner, valueEnd) else { return nil }
            property.integer = flag == 0 ? 0 : 1
        case 6:
            guard wire == 2, let list = readLength(&inner, valueEnd), var item = list.baseAddress else { return nil }
            let listEnd = item + list.count
            property.integer = Int64(items.count)
            var count = 0
            while item < listEnd {
                guard readVarint(&item, listEnd) == 0x0A, count < limits.max_list_length,
                      let text = readString(&item, listEnd, limits) else { return nil }
                items.append(text)
                count += 1
            }
            property.list_count = count
        default: return nil
        }
        guard inner == valueEnd else { return nil }
        property.kind = UInt32(truncatingIfNeeded: valueKey >> 3)
        return property
    }

    // MARK: - Wire primitives

    /// A varint as the C scan reads it: at most ten bytes, the tenth holding bit 63 alone.
    @inline(__always)
    private static func readVarint(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer) -> UInt64? {
        guard at < end else { return nil }
        let first = at.load(as: UInt8.self)
        if first < 0x80 {
            at += 1
            return UInt64(first)
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var pointer = at
        while pointer < end, shift < 64 {
            let byte = pointer.load(as: UInt8.self)
            pointer += 1
            if shift == 63, byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                at = pointer
                return value
            }
            shift += 7
        }
        return nil
    }

    /// A length-delimited body.
    @inline(__always)
    private static func readLength(_ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer) -> UnsafeRawBufferPointer? {
        guard let length = readVarint(&at, end), length <= UInt64(end - at) else { return nil }
        let body = UnsafeRawBufferPointer(start: at, count: Int(length))
        at += Int(length)
        return body
    }

    /// A string the C scan accepts: within the length limit, strict UTF-8, no NUL.
    @inline(__always)
    private static func readString(
        _ at: inout UnsafeRawPointer, _ end: UnsafeRawPointer, _ limits: spoor_decode_limits
    ) -> spoor_str_view? {
        guard let body = readLength(&at, end), body.count <= limits.max_string_bytes, isPlainUTF8(body) else { return nil }
        return spoor_str_view(ptr: body.baseAddress?.assumingMemoryBound(to: CChar.self), len: body.count)
    }

    /// Strict UTF-8 without NUL (what the C scan's `utf8_valid` and its NUL check accept), eight ASCII bytes at a time.
    static func isPlainUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
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
            let need: Int
            var scalar: UInt32
            switch byte {
            case 0xC2...0xDF: need = 1; scalar = UInt32(byte & 0x1F)
            case 0xE0...0xEF: need = 2; scalar = UInt32(byte & 0x0F)
            case 0xF0...0xF4: need = 3; scalar = UInt32(byte & 0x07)
            default: return false
            }
            guard count - index > need else { return false }
            for offset in 1...need {
                let next = start.load(fromByteOffset: index + offset, as: UInt8.self)
                guard next & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            if need == 2, scalar < 0x800 || (0xD800...0xDFFF).contains(scalar) { return false }
            if need == 3, scalar < 0x10000 || scalar > 0x10FFFF { return false }
            index += need + 1
        }
        return true
    }

    /// An enum's value as protobuf-c stores it, or nil when no `int32` encodes to it (the C scan refuses it).
    @inline(__always)
    private static func int32(_ value: UInt64) -> Int32? {
        let signed = Int64(bitPattern: value)
        return signed >= Int64(Int32.min) && signed <= Int64(Int32.max) ? Int32(signed) : nil
    }

    @inline(__always)
    private static func zigZag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
