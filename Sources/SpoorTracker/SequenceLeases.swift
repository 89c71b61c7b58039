/// The sequence numbers the writer gives events, from blocks leased from the shared state file.
///
/// Every process that tracks into a storage directory numbers its events from the same install (the anonymous id
/// in `state.json`), so two of them must never give the same number: each takes a block of numbers from
/// `state.json`'s `nextSequence` under the state lock (``PersistentStateFile/update(fallback:counted:found:_:)``),
/// and moves it past the block, before using any of it. A crash therefore never reuses a number either: the file
/// is past every number handed out. Numbers left in a block when the process ends stay unused.
///
/// Callers number events locally (1, 2, 3…, ``WriterQueue/takeSequence()``) under the pipeline's lock; the writer
/// turns each into a leased number in the same order. An event dropped at the memory bound keeps its gap: its
/// local number is skipped, and so is a leased one (a gap reaching past the block is carried into the next,
/// leased that much larger). Blocks start small and double up to ``largestBlock``; at a clean end the unused rest of
/// the block is handed back when no other process leased after it (``unused``), so one process that starts again
/// carries on where it stopped. A pure value: the writer does the lease.
package struct SequenceLeases: Equatable, Sendable {
    /// The next number of the block, and the block's end.
    private var next: UInt64 = 0
    private var end: UInt64 = 0
    /// The local number of the last event numbered.
    private var lastLocal: UInt64 = 0
    /// Numbers of dropped events still to skip at the start of the next block.
    private var carried: UInt64 = 0
    /// Whether the block in use was leased (an unleased stretch is never handed back).
    private var leased = false
    /// How many numbers a stretch without a lease takes before a lease is tried again.
    package static let unleasedStretch: UInt64 = 64
    /// The size of the next block to lease.
    package private(set) var blockSize: UInt64
    /// The first block's size, and the largest one's.
    package static let firstBlock: UInt64 = 1024
    package static let largestBlock: UInt64 = 1 << 20

    package init(firstBlock: UInt64 = Self.firstBlock) {
        blockSize = max(1, firstBlock)
    }

    /// The leased number of the event numbered `local` by the queue, or nil when the block is used up: lease one
    /// (``add(_:)``) and ask again.
    package mutating func number(local: UInt64) -> UInt64? {
        let skipped = local > lastLocal ? local - lastLocal - 1 : 0
        guard skipped < end - next else {
            // The gap goes on in the next block.
            carried = skipped - (end - next)
            lastLocal = local &- 1
            next = end
            return nil
        }
        next += skipped
        lastLocal = local
        defer { next += 1 }
        return next
    }

    /// Where the next lease must start at least: past every number this process used.
    package var floor: UInt64 { next }

    /// Past every number this process leased or used: what the state file holds at least.
    package var frontier: UInt64 { max(next, end) }

    /// How many numbers the next lease takes: a block, and the gap carried into it.
    package var nextLeaseSize: UInt64 { blockSize + carried }

    /// Uses `block` (``nextLeaseSize`` numbers) from now on, past the gap carried into it, and doubles the next
    /// block's size.
    package mutating func add(_ block: Range<UInt64>) {
        next = min(block.lowerBound + carried, block.upperBound)
        end = block.upperBound
        carried = 0
        leased = true
        blockSize = min(blockSize * 2, Self.largestBlock)
    }

    /// Carries on without a lease (the state lock was not free in time), for a short stretch (``unleasedStretch``)
    /// from `floor` at least (past what the state file and the lock file say was leased, read without the lock):
    /// numbers stay increasing, the next lease is tried when the stretch is used, and it starts past it. A process
    /// leasing during the stretch may take the same numbers.
    package mutating func continueUnleased(from floor: UInt64) {
        next = max(next + carried, floor)
        carried = 0
        end = next + Self.unleasedStretch
        leased = false
    }

    /// The numbers of the block not used: handed back at a clean end if the state file's next number is still the
    /// block's end.
    package var unused: Range<UInt64> { leased ? next..<end : next..<next }
}
