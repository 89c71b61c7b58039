/// Why bytes could not be decoded as an event: what is wrong, in which field, at which byte.
public struct DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of malformed input.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The input ends inside a field.
        case truncated
        /// A varint runs longer than 10 bytes, or its tenth byte holds more than the 64th bit.
        case overlongVarint
        /// A length prefix reaches past the end of the input.
        case lengthPastEnd
        /// A known field arrived with another wire type.
        case wrongWireType
        /// Field number 0, a number out of range, or a group wire type.
        case invalidTag
        /// A string is not valid UTF-8.
        case invalidUTF8
        /// A string holds U+0000.
        case embeddedNUL
        /// The event is larger than the limit.
        case eventTooLarge
        /// A string is longer than the limit.
        case stringTooLong
        /// The event has more properties than the limit.
        case tooManyProperties
        /// A list has more items than the limit.
        case listTooLong
        /// A property has no value.
        case missingValue
        /// A double is NaN or infinite.
        case nonFiniteDouble
        /// An event type of 0 (unspecified), or an enum value no `int32` encodes to.
        case invalidEnum
        /// Decoding would need more memory than the input can justify (the protobuf-c path only, whose arena is
        /// sized so that no input reaches it).
        case outOfMemory
        /// protobuf-c refused input the scan accepted: a tag or length prefix written in more than five bytes
        /// (both paths refuse it alike).
        case unpackFailed
        /// An event refers to a shared context (`Batch.contexts`) that its batch does not hold.
        case unknownContext
    }

    /// What is wrong.
    public var kind: Kind
    /// The field path, such as `properties.value.double_value`.
    public var field: String
    /// The byte offset in the input (in a batch, from the batch's start) of the offending tag or value.
    public var offset: Int
    /// The length, count or value at fault, where there is one.
    public var detail: UInt64
    /// In a batch, the index of the event at fault.
    public var eventIndex: Int?

    /// Creates a decode error.
    public init(kind: Kind, field: String, offset: Int, detail: UInt64 = 0, eventIndex: Int? = nil) {
        self.kind = kind
        self.field = field
        self.offset = offset
        self.detail = detail
        self.eventIndex = eventIndex
    }

    public var description: String {
        let at = eventIndex.map { "event \($0), " } ?? ""
        return "\(at)\(field) at byte \(offset): \(reason)"
    }

    /// A human-readable explanation.
    public var reason: String {
        switch kind {
        case .truncated: "input ends inside the field"
        case .overlongVarint: "varint longer than 10 bytes or over 64 bits"
        case .lengthPastEnd: "length \(detail) reaches past the end of the input"
        case .wrongWireType: "unexpected wire type \(detail)"
        case .invalidTag: "invalid tag \(detail)"
        case .invalidUTF8: "invalid UTF-8"
        case .embeddedNUL: "string contains U+0000"
        case .eventTooLarge: "event of \(detail) bytes is over the limit"
        case .stringTooLong: "string of \(detail) bytes is over the limit"
        case .tooManyProperties: "more than the limit of properties (\(detail) seen)"
        case .listTooLong: "list longer than the limit (\(detail) items seen)"
        case .missingValue: "property without a value"
        case .nonFiniteDouble: "double is NaN or infinite"
        case .invalidEnum: "value \(detail) is outside the enum"
        case .outOfMemory: "decoding needs more memory than allowed"
        case .unpackFailed: "protobuf-c could not unpack the event"
        case .unknownContext: "context \(detail) is not in the batch"
        }
    }
}
