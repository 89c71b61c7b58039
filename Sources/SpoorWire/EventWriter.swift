internal import CSpoorViews
import SpoorModel

/// The encoder's Swift path: the bytes protobuf-c packs for an event, written in Swift (docs/wire-paths.md).
///
/// protobuf-c's rules for this schema, which the tests hold byte for byte against it: fields in number order; a
/// string, enum or integer of `Event` or `Lib` is left out at its default (empty, 0); `lib` is always written, even
/// empty; an entry's key is left out when empty, its value always written; a value's member is written whatever
/// it holds (an empty string, 0, `false`, an empty list); list items are written even when empty; enums and `int64`
/// below zero take ten bytes; properties go in the order of their keys' UTF-8 bytes.
///
/// The checks come in the C path's order, with its errors: each string is stored (an event past 4 GiB is refused
/// at the string that passes it), a non-finite double is refused as its property is met (in the dictionary's
/// order), then a string holding U+0000 is refused. Owned by one encoder; freed with ``deallocate()``.
struct EventWriter {
    /// Every string of the event; offset 0 holds the empty string. The same block, and so the same 4 GiB bound
    /// and NUL check, as the protobuf-c path.
    private var text = TextBlock()
    private var properties = ScratchList<Property>()
    private var items = ScratchList<Slice>()
    /// The properties' indices in key order.
    private var order = ScratchList<Int>()
    /// The entry being written, with room for its header before it.
    private var packed = ScratchList<UInt8>()

    /// A string's bytes in `text`.
    struct Slice {
        var offset = 0
        var count = 0
    }

    /// One property, flattened, with the sizes its entry takes.
    struct Property {
        var key = Slice()
        var kind: UInt32 = 0
        /// The varint the value's member holds: a zigzagged int or date, a bool's 0 or 1.
        var varint: UInt64 = 0
        var real: Double = 0
        var string = Slice()
        var listStart = 0
        var listCount = 0
        var listSize = 0
        var valueSize = 0
        var entrySize = 0
    }

    mutating func deallocate() {
        text.deallocate()
        properties.deallocate()
        items.deallocate()
        order.deallocate()
        packed.deallocate()
    }

    /// Appends the encoding of `event` (as a batch entry with tag `entryTag`, when there is one) followed by
    /// `suffix` to `buffer`, in one copy; on error `buffer` is left as it was.
    mutating func encode(_ event: Event, into buffer: inout [UInt8], entryTag: UInt8?, suffix: [UInt8]) throws(EncodeError) {
        text.reset()
        properties.removeAll()
        items.removeAll()
        order.removeAll()

        let name = try store(event.name, "event")
        let distinctID = try store(event.distinctID, "distinct_id")
        let anonymousID = try store(event.anonymousID, "anonymous_id")
        let loginID = try store(event.loginID ?? "", "login_id")
        let sessionID = try store(event.sessionID ?? "", "session_id")
        let originalID = try store(event.originalID ?? "", "original_id")
        let lib = try store(event.lib.lib, "lib.lib")
        let libVersion = try store(event.lib.libVersion, "lib.lib_version")
        let appVersion = try store(event.lib.appVersion, "lib.app_version")

        for (key, value) in event.properties {
            var property = Property()
            property.key = try store(key, "properties.key")
            property.kind = value.kind
            switch value {
            case .string(let string): property.string = try store(string, "properties.value.string_value")
            case .int(let int): property.varint = Varint.zigZag(int)
            case .double(let double):
                guard double.isFinite else {
                    throw EncodeError(field: "properties.value.double_value", reason: "\(key): \(double) is not finite")
                }
                property.real = double
            case .bool(let bool): property.varint = bool ? 1 : 0
            case .date(let millis): property.varint = Varint.zigZag(millis)
            case .list(let list):
                property.listStart = items.count
                property.listCount = list.count
                for item in list {
                    let slice = try store(item, "properties.value.list_value.values")
                    items.append(slice)
                    property.listSize += Self.stringFieldSize(slice)
                }
            }
            properties.append(property)
        }
        // protobuf-c strings end at the first NUL, so neither path writes one inside a string.
        if text.hasEmbeddedNUL { throw EncodeError.embeddedNUL(in: event) }

        sortProperties()
        var propertiesSize = 0
        for index in 0..<properties.count {
            let size = properties.base![index].measure()
            propertiesSize += 1 + Varint.length(of: UInt64(size)) + size
        }

        let method = event.lib.method.rawValue
        let libSize = Self.stringSize(lib) + Self.stringSize(libVersion) + Self.enumSize(method) + Self.stringSize(appVersion)
        let type = event.type.rawValue
        let time = UInt64(bitPattern: event.time)
        let bodySize = Self.stringSize(name) + Self.enumSize(type)
            + (time == 0 ? 0 : 1 + Varint.length(of: time))
            + (event.trackID == 0 ? 0 : 9)
            + (event.sequence == 0 ? 0 : 1 + Varint.length(of: event.sequence))
            + Self.stringSize(distinctID) + Self.stringSize(anonymousID) + Self.stringSize(loginID)
            + 1 + Varint.length(of: UInt64(libSize)) + libSize
            + propertiesSize
            + Self.stringSize(sessionID) + Self.stringSize(originalID)
        let entrySize = bodySize + suffix.count
        let headerSize = entryTag == nil ? 0 : 1 + Varint.length(of: UInt64(entrySize))

        packed.removeAll()
        packed.reserve(headerSize + entrySize)
        var out = Output(at: packed.base!, text: UnsafePointer(text.base!))
        if let entryTag {
            out.byte(entryTag)
            out.varint(UInt64(entrySize))
        }
        out.string(1, name)
        out.enumField(2, type)
        if time != 0 { out.varintField(3, time) }
        if event.trackID != 0 { out.fixed64(4, event.trackID) }
        if event.sequence != 0 { out.varintField(5, event.sequence) }
        out.string(6, distinctID)
        out.string(7, anonymousID)
        out.string(8, loginID)
        out.key(9, wire: 2)
        out.varint(UInt64(libSize))
        out.string(1, lib)
        out.string(2, libVersion)
        out.enumField(3, method)
        out.string(4, appVersion)
        for index in 0..<order.count {
            write(properties.base![order.base![index]], to: &out)
        }
        out.string(11, sessionID)
        out.string(12, originalID)
        if !suffix.isEmpty {
            suffix.withUnsafeBufferPointer { out.bytes($0.baseAddress!, $0.count) }
        }
        precondition(out.at == packed.base! + headerSize + entrySize, "Spoor: an event's measured size and its bytes differ")
        buffer.append(contentsOf: UnsafeBufferPointer(start: packed.base, count: headerSize + entrySize))
    }

    /// Writes one properties entry: its key unless empty, then its value.
    private func write(_ property: Property, to out: inout Output) {
        out.key(10, wire: 2)
        out.varint(UInt64(property.entrySize))
        out.string(1, property.key)
        out.key(2, wire: 2)
        out.varint(UInt64(property.valueSize))
        switch Int(property.kind) {
        case Int(SPOOR_KIND_STRING): out.stringMember(1, property.string)
        case Int(SPOOR_KIND_DOUBLE):
            out.fixed64(3, property.real.bitPattern)
        case Int(SPOOR_KIND_LIST):
            out.key(6, wire: 2)
            out.varint(UInt64(property.listSize))
            for index in property.listStart..<property.listStart + property.listCount {
                out.stringMember(1, items.base![index])
            }
        default: out.varintField(UInt64(property.kind), property.varint)
        }
    }

    /// Copies `string` into `text`; an event past 4 GiB is refused, naming the field.
    @inline(__always)
    private mutating func store(_ string: String, _ field: StaticString) throws(EncodeError) -> Slice {
        if string.isEmpty { return Slice() }
        guard let offset = text.append(string) else { throw EncodeError.tooLarge(field) }
        // The block holds the string's bytes and then its NUL.
        return Slice(offset: Int(offset), count: text.count - 1 - Int(offset))
    }

    /// Puts the properties' indices in `order`, by their keys' UTF-8 bytes (keys are unique: any sort agrees).
    private mutating func sortProperties() {
        let count = properties.count
        order.reserve(count)
        for index in 0..<count { order.append(index) }
        guard count > 1, let base = text.base, let props = properties.base, let indices = order.base else { return }
        let keys = UnsafePointer(base)
        func less(_ a: Int, _ b: Int) -> Bool {
            Self.compare(keys, props[a].key, props[b].key) < 0
        }
        var buffer = UnsafeMutableBufferPointer(start: indices, count: count)
        if count > 32 {
            buffer.sort(by: less)
            return
        }
        // Insertion sort: events carry a handful of properties.
        for i in 1..<count {
            let index = buffer[i]
            var j = i
            while j > 0, less(index, buffer[j - 1]) {
                buffer[j] = buffer[j - 1]
                j -= 1
            }
            buffer[j] = index
        }
    }

    /// The order of two strings' bytes: negative, zero or positive, as `memcmp` then the lengths would say.
    private static func compare(_ text: UnsafePointer<UInt8>, _ a: Slice, _ b: Slice) -> Int {
        let common = min(a.count, b.count)
        var index = 0
        // Eight bytes a step, read big-endian so that the first differing byte decides.
        while index + 8 <= common {
            let left = UInt64(bigEndian: UnsafeRawPointer(text + a.offset + index).loadUnaligned(as: UInt64.self))
            let right = UInt64(bigEndian: UnsafeRawPointer(text + b.offset + index).loadUnaligned(as: UInt64.self))
            if left != right { return left < right ? -1 : 1 }
            index += 8
        }
        while index < common {
            let left = text[a.offset + index], right = text[b.offset + index]
            if left != right { return Int(left) - Int(right) }
            index += 1
        }
        return a.count - b.count
    }

    /// A string field of `Event` or `Lib`: nothing when empty.
    private static func stringSize(_ slice: Slice) -> Int {
        slice.count == 0 ? 0 : stringFieldSize(slice)
    }

    /// A string written whatever it holds: tag, length, bytes.
    static func stringFieldSize(_ slice: Slice) -> Int {
        1 + Varint.length(of: UInt64(slice.count)) + slice.count
    }

    /// An enum field: nothing at 0; a negative value takes ten bytes (an `int32` sign-extended to 64 bits).
    private static func enumSize(_ value: Int32) -> Int {
        value == 0 ? 0 : 1 + Varint.length(of: UInt64(bitPattern: Int64(value)))
    }
}

extension EventWriter.Property {
    /// Fills in the sizes of the value and the entry, and returns the entry's.
    mutating func measure() -> Int {
        let member = switch Int(kind) {
        case Int(SPOOR_KIND_STRING): EventWriter.stringFieldSize(string)
        case Int(SPOOR_KIND_DOUBLE): 9
        case Int(SPOOR_KIND_LIST): 1 + Varint.length(of: UInt64(listSize)) + listSize
        default: 1 + Varint.length(of: varint)
        }
        valueSize = member
        entrySize = (key.count == 0 ? 0 : EventWriter.stringFieldSize(key)) + 1 + Varint.length(of: UInt64(member)) + member
        return entrySize
    }
}

extension PropertyValue {
    /// The `Value` oneof member that holds this value.
    fileprivate var kind: UInt32 {
        switch self {
        case .string: UInt32(SPOOR_KIND_STRING)
        case .int: UInt32(SPOOR_KIND_INT)
        case .double: UInt32(SPOOR_KIND_DOUBLE)
        case .bool: UInt32(SPOOR_KIND_BOOL)
        case .date: UInt32(SPOOR_KIND_DATE)
        case .list: UInt32(SPOOR_KIND_LIST)
        }
    }
}

/// Where the writer is in memory sized beforehand.
private struct Output {
    var at: UnsafeMutablePointer<UInt8>
    let text: UnsafePointer<UInt8>

    init(at: UnsafeMutablePointer<UInt8>, text: UnsafePointer<UInt8>) {
        self.at = at
        self.text = text
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        at.pointee = value
        at += 1
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        at = Varint.write(value, at: at)
    }

    /// A key: field numbers here are below 16, so one byte.
    @inline(__always)
    mutating func key(_ number: UInt64, wire: UInt64) {
        byte(UInt8(truncatingIfNeeded: number << 3 | wire))
    }

    @inline(__always)
    mutating func bytes(_ source: UnsafePointer<UInt8>, _ count: Int) {
        at.update(from: source, count: count)
        at += count
    }

    /// A string field of `Event` or `Lib`, left out when empty.
    @inline(__always)
    mutating func string(_ number: UInt64, _ slice: EventWriter.Slice) {
        if slice.count > 0 { stringMember(number, slice) }
    }

    /// A string written whatever it holds.
    @inline(__always)
    mutating func stringMember(_ number: UInt64, _ slice: EventWriter.Slice) {
        key(number, wire: 2)
        varint(UInt64(slice.count))
        bytes(text + slice.offset, slice.count)
    }

    @inline(__always)
    mutating func varintField(_ number: UInt64, _ value: UInt64) {
        key(number, wire: 0)
        varint(value)
    }

    /// An enum field, left out at 0.
    @inline(__always)
    mutating func enumField(_ number: UInt64, _ value: Int32) {
        if value != 0 { varintField(number, UInt64(bitPattern: Int64(value))) }
    }

    @inline(__always)
    mutating func fixed64(_ number: UInt64, _ value: UInt64) {
        key(number, wire: 1)
        UnsafeMutableRawPointer(at).storeBytes(of: value.littleEndian, as: UInt64.self)
        at += 8
    }
}
