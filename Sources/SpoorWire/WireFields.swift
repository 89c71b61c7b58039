/// The protobuf wire types a key can carry (the low three bits of a field's key).
package enum WireType: UInt64, Sendable {
    /// A varint: `int64`, `uint64`, `uint32`, `sint64`, `bool`, enums.
    case varint = 0
    /// Eight bytes: `fixed64`, `double`.
    case fixed64 = 1
    /// A varint length, then that many bytes: strings, bytes, messages, map entries.
    case lengthDelimited = 2
    /// A group's start (deprecated in protobuf; never valid in Spoor's messages).
    case startGroup = 3
    /// A group's end.
    case endGroup = 4
    /// Four bytes: `fixed32`, `float`.
    case fixed32 = 5
}

/// The field numbers of `spoor.v1.Event` (proto/spoor/v1/event.proto); `WireFieldsTests` checks them against the
/// proto file, so a renumbering there fails the tests instead of slipping past.
package enum EventField: UInt64, CaseIterable, Sendable {
    case event = 1
    case type = 2
    case time = 3
    case trackID = 4
    case sequence = 5
    case distinctID = 6
    case anonymousID = 7
    case loginID = 8
    case lib = 9
    case properties = 10
    case sessionID = 11
    case originalID = 12
    /// In a batch: 1 + the index of the `Batch.contexts` entry the event extends; absent (0) for none.
    case context = 13
    /// A `sint64` added to `time` once the event is whole.
    case timeOffset = 14
    /// A `sint64` added to `sequence` once the event is whole.
    case sequenceOffset = 15

    /// The key of this field with `wireType`.
    package func key(_ wireType: WireType) -> UInt64 { rawValue << 3 | wireType.rawValue }
}

/// The field numbers of `spoor.v1.Batch`: a batch payload is a run of entries of these two fields.
package enum BatchField: UInt64, CaseIterable, Sendable {
    /// An event, in the order recorded.
    case events = 1
    /// What events share, referred to by their `context`.
    case contexts = 2

    /// The one-byte key of an entry of this field (length-delimited): `0x0A` for events, `0x12` for contexts.
    package var tag: UInt8 { UInt8(rawValue << 3 | WireType.lengthDelimited.rawValue) }
}

/// The field numbers of a `properties` map entry (protobuf writes a `map<string, Value>` entry as a message of
/// these two fields).
package enum PropertyEntryField: UInt64, CaseIterable, Sendable {
    case key = 1
    case value = 2
}

/// The field numbers of `spoor.v1.Lib`.
package enum LibField: UInt64, CaseIterable, Sendable {
    case lib = 1
    case libVersion = 2
    case method = 3
    case appVersion = 4
}

/// The field numbers of `spoor.v1.Value` (its `kind` oneof).
package enum ValueField: UInt64, CaseIterable, Sendable {
    case stringValue = 1
    case intValue = 2
    case doubleValue = 3
    case boolValue = 4
    case dateValue = 5
    case listValue = 6
}
