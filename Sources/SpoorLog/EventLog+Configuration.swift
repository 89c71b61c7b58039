public import SpoorSystem

extension EventLog {
    /// The log's limits and behaviour.
    public struct Configuration: Sendable {
        /// The most bytes of framed records the log holds (default 32 MiB).
        public var maxBytes: Int
        /// The most records the log holds (default 10,000).
        public var maxRecords: Int
        /// When records are forced to disk (default: at most a second after they are appended).
        public var durability: Durability
        /// The size at which a new segment file is started; `nil` picks `maxBytes / 16` within 256 KiB...4 MiB.
        public var segmentBytes: Int?
        /// The most bytes of records kept in memory while the disk is failing (default 4 MiB).
        public var maxMemoryBytes: Int
        /// The most sealed batches waiting in the outbox (default 16).
        public var maxPendingBatches: Int
        /// How long the log waits before trying the disk again after a failure (default 5 s).
        public var retryInterval: Duration
        /// The clock whose wall reading stamps sealed batches and times batched syncs (default the system's; tests
        /// pass a manual clock).
        public var clock: any SpoorClock

        /// Creates a configuration.
        public init(
            maxBytes: Int = 32 << 20,
            maxRecords: Int = 10_000,
            durability: Durability = .batched(interval: .seconds(1)),
            segmentBytes: Int? = nil,
            maxMemoryBytes: Int = 4 << 20,
            maxPendingBatches: Int = 16,
            retryInterval: Duration = .seconds(5),
            clock: any SpoorClock = SystemClock()
        ) {
            self.maxBytes = maxBytes
            self.maxRecords = maxRecords
            self.durability = durability
            self.segmentBytes = segmentBytes
            self.maxMemoryBytes = maxMemoryBytes
            self.maxPendingBatches = maxPendingBatches
            self.retryInterval = retryInterval
            self.clock = clock
        }

        /// The wall clock, in milliseconds since the epoch.
        func now() -> Int64 { clock.wallMilliseconds() }

        var effectiveSegmentBytes: Int {
            segmentBytes ?? min(max(maxBytes / 16, 256 << 10), 4 << 20)
        }
    }
}
