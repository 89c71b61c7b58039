public import SpoorModel
public import SpoorWire

/// One `events` row.
public struct EventRow: Sendable, Hashable {
    /// The event's index in its batch.
    public var idx: Int
    /// The event name.
    public var name: String
    /// The record type's name, such as `track`.
    public var type: String
    /// Event time, epoch milliseconds.
    public var timeMs: Int64
    /// The distinct id.
    public var distinctID: String
    /// The anonymous id.
    public var anonymousID: String
    /// The login id, if any.
    public var loginID: String?
    /// The session id, if any.
    public var sessionID: String?
    /// The track id as 16 hex digits.
    public var trackID: String
    /// The install's sequence number (bit pattern of the unsigned value).
    public var sequence: Int64
    /// The library info as JSON.
    public var lib: String
    /// The properties as JSON.
    public var properties: String

    /// The row for an event at `idx`.
    public init(_ event: Event, idx: Int) {
        self.idx = idx
        name = event.name
        type = event.type.name
        timeMs = event.time
        distinctID = event.distinctID
        anonymousID = event.anonymousID
        loginID = event.loginID
        sessionID = event.sessionID
        trackID = Self.hex(TrackID.of(event))
        sequence = Int64(bitPattern: event.sequence)
        lib = RowJSON.object([
            ("$lib", .string(event.lib.lib)),
            ("$lib_version", .string(event.lib.libVersion)),
            ("$lib_method", .string(event.lib.method.name)),
            ("$app_version", .string(event.lib.appVersion)),
        ])
        properties = RowJSON.object(event.properties.sorted { $0.key < $1.key })
    }

    /// The row for a decoded event at `idx`, built from the decoder's view without an ``Event``: the same row
    /// as `init(_:idx:)` gives for the event (`RowJSONTests` compares them over corpora and workloads).
    public init(_ view: EventView, idx: Int) {
        self.idx = idx
        name = Self.text(view.name)
        type = view.type.name
        timeMs = view.time
        distinctID = Self.text(view.distinctID)
        anonymousID = Self.text(view.anonymousID)
        loginID = view.loginID.isEmpty ? nil : Self.text(view.loginID)
        sessionID = view.sessionID.isEmpty ? nil : Self.text(view.sessionID)
        trackID = Self.hex(TrackID.of(trackID: view.trackID, anonymousID: view.anonymousID, sequence: view.sequence))
        sequence = Int64(bitPattern: view.sequence)
        var lib = RowJSON(capacity: 96)
        lib.bytes.append(contentsOf: #"{"$lib":"#.utf8)
        lib.string(view.lib)
        lib.bytes.append(contentsOf: #","$lib_version":"#.utf8)
        lib.string(view.libVersion)
        lib.bytes.append(contentsOf: #","$lib_method":"#.utf8)
        lib.string(view.libMethod.name)
        lib.bytes.append(contentsOf: #","$app_version":"#.utf8)
        lib.string(view.appVersion)
        lib.bytes.append(UInt8(ascii: "}"))
        self.lib = String(decoding: lib.bytes, as: UTF8.self)
        properties = RowJSON.properties(view)
    }

    /// A track id as 16 hex digits.
    private static func hex(_ trackID: UInt64) -> String {
        let digits = String(trackID, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// A decoded batch, ready for a store: the `batches` row and its events.
public struct BatchRecord: Sendable, Hashable {
    /// The batch id, 32 hex digits.
    public var batchID: String
    /// When the collector received it, epoch milliseconds.
    public var receivedAt: Int64
    /// The frame's codec name.
    public var codec: String
    /// The frame's size in bytes.
    public var bytes: Int
    /// The event rows, in batch order.
    public var events: [EventRow]

    /// Creates a record.
    public init(batchID: String, receivedAt: Int64, codec: String, bytes: Int, events: [EventRow]) {
        self.batchID = batchID
        self.receivedAt = receivedAt
        self.codec = codec
        self.bytes = bytes
        self.events = events
    }
}
