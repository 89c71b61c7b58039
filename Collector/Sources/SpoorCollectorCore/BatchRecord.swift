/// A decoded batch, ready for a store: the `batches` row, its events' rows, and the frame as it came.
public struct BatchRecord: Sendable {
    /// The batch id, 32 hex digits.
    public var batchID: String
    /// When the collector received it, epoch milliseconds.
    public var receivedAt: Int64
    /// The frame's codec name.
    public var codec: String
    /// The frame as received, for stores that keep frames (``BatchStore/keepsFrames``).
    public var frame: [UInt8]
    /// How many events the batch holds.
    public var eventCount: Int
    /// The events' rows, in batch order; empty when the store keeps frames, which need no rows.
    public var rows: EventRows

    /// The frame's size in bytes.
    public var bytes: Int { frame.count }

    /// The bytes this record holds: its frame and its rows' text.
    public var heldBytes: Int { frame.count + rows.text.bytes.count }

    /// Creates a record.
    public init(batchID: String, receivedAt: Int64, codec: String, frame: [UInt8], eventCount: Int, rows: EventRows) {
        self.batchID = batchID
        self.receivedAt = receivedAt
        self.codec = codec
        self.frame = frame
        self.eventCount = eventCount
        self.rows = rows
    }
}
