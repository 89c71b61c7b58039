package import SpoorSystem

/// The writer's queue: the front buffer callers append to, sequence numbers, the writer's state, callers
/// waiting at the memory bound, flush generations and the stop, with the rules for when the writer must be
/// woken and what it does next.
///
/// A pure value: the pipeline keeps it under its lock, and each method says what is to be done (wake the
/// writer, release waiting callers, answer flushes), which the pipeline does after releasing the lock.
package struct WriterQueue {
    /// What the writer is doing, as callers see it.
    package enum WriterState: Equatable {
        /// Running, or about to: nobody needs to wake it.
        case busy
        /// Parked until woken.
        case idle
        /// Letting a small batch grow for a moment; woken early when `wakeThreshold` events wait.
        case lingering
    }

    /// What the writer does next (``nextStep(lingered:swappingWith:)``).
    package enum Step {
        /// Park until woken.
        case waitIdle
        /// Park for the linger time, or until woken.
        case waitLinger
        /// Write the events swapped out; then sync and answer flushes up to `flushGeneration` if `sync`.
        /// `save`: save the state (with ``nextSequence`` as it was when the events were taken). `release`: callers
        /// waiting at the bound to let go. `retired`: what the events may point to, kept alive until written.
        case write(flushGeneration: UInt64, sync: Bool, save: Bool, release: Int, retired: [AnyObject])
        /// Save the state, close the store and answer `waiters`; the writer ends.
        case exit(waiters: [Promise<Bool>])
    }

    /// Whether a caller's event may go in (``admit()``).
    package enum Admission: Equatable {
        case open
        /// The buffer is at the bound: the caller waits for the writer (woken when `wakeWriter`).
        case full(wakeWriter: Bool)
        /// The pipeline is stopping: the event is dropped (and counted).
        case stopped
        /// The user opted out: the event is not recorded (nor counted: it is what the user asked for).
        case declined
    }

    /// The most events held before callers wait for the writer (or, with `dropsOldestWhenFull`, the oldest goes).
    package let memoryLimit: Int
    /// At the bound, drop the oldest waiting event (counted) instead of making the caller wait: a server's
    /// request must never block on its analytics.
    package let dropsOldestWhenFull: Bool
    /// Wake a lingering writer once this many events wait.
    package let wakeThreshold: Int
    /// The front buffer: callers append, the writer swaps it for its empty back buffer. Its first `droppedHead`
    /// slots are events dropped at the bound, left empty (see ``waiting``).
    private var buffer: [PendingEvent]
    /// How many slots at the front of `buffer` hold dropped events: dropping the oldest moves nothing, and the
    /// slots are removed together, once half the bound has been dropped or when the writer takes the buffer.
    private var droppedHead = 0
    /// The events waiting for the writer, oldest first.
    package var waiting: ArraySlice<PendingEvent> { buffer[droppedHead...] }
    /// The sequence number the next accepted event gets.
    package private(set) var nextSequence: UInt64
    package private(set) var accepted = 0
    package private(set) var droppedAfterShutdown = 0
    /// Accepted events dropped, oldest first, because the buffer was at its bound (`dropsOldestWhenFull`).
    package private(set) var droppedAtBound = 0
    /// The state is to be saved at the writer's next step.
    package private(set) var saveNeeded = false
    package private(set) var writerState = WriterState.busy
    private var blockedProducers = 0
    private var flushes = FlushGenerations<Bool>()
    package private(set) var stopping = false
    package private(set) var stopped = false
    /// Snapshots and sessions replaced since the writer last took the buffer: events waiting there may point to
    /// them (unretained), so they live until the writer has written those events.
    private var retired: [AnyObject] = []

    package init(nextSequence: UInt64, memoryLimit: Int, wakeThreshold: Int, capacity: Int, dropsOldestWhenFull: Bool = false) {
        self.nextSequence = nextSequence
        self.memoryLimit = memoryLimit
        self.dropsOldestWhenFull = dropsOldestWhenFull
        self.wakeThreshold = wakeThreshold
        buffer = []
        buffer.reserveCapacity(capacity)
    }

    // MARK: Callers

    /// Whether an event may be appended now. A refusal after a stop is counted; a caller at the bound waits.
    @inline(__always)
    package mutating func admit(optedOut: Bool) -> Admission {
        if stopping {
            droppedAfterShutdown += 1
            return .stopped
        }
        if optedOut { return .declined }
        if buffer.count - droppedHead >= memoryLimit {
            guard dropsOldestWhenFull else {
                blockedProducers += 1
                return .full(wakeWriter: wakeIfWaiting())
            }
            dropOldest()
        }
        return .open
    }

    /// Drops the oldest waiting event: its slot is emptied (what it held is released now) and skipped.
    private mutating func dropOldest() {
        var dropped = PendingEvent.empty
        swap(&dropped, &buffer[droppedHead])
        droppedHead += 1
        droppedAtBound += 1
        // Half the bound's worth of empty slots are removed at once, so memory stays within 1.5 times the bound
        // and each drop moves at most two events on average.
        if droppedHead >= max(1, memoryLimit / 2) { removeDroppedHead() }
    }

    private mutating func removeDroppedHead() {
        guard droppedHead > 0 else { return }
        buffer.removeFirst(droppedHead)
        droppedHead = 0
    }

    /// Takes the next sequence number.
    @inline(__always)
    package mutating func takeSequence() -> UInt64 {
        defer { nextSequence &+= 1 }
        return nextSequence
    }

    /// Moves `event` into the front buffer (`event` is left empty). Returns whether the writer must be woken.
    @inline(__always)
    package mutating func append(_ event: inout PendingEvent) -> Bool {
        // Moved, not copied: the caller's `event` is left empty (immortal empty values), so no reference count
        // is raised here and dropped again when the caller's copy goes away.
        var moved = PendingEvent.empty
        swap(&moved, &event)
        buffer.append(moved)
        accepted += 1
        switch writerState {
        case .idle:
            writerState = .busy
            return true
        case .lingering where buffer.count >= wakeThreshold:
            writerState = .busy
            return true
        default:
            return false
        }
    }

    /// Keeps `object` alive until the writer has written the events now waiting (they may point to it).
    package mutating func retire(_ object: AnyObject) {
        retired.append(object)
    }

    /// Drops the events waiting in memory (the user opted out and asked for their data to be erased); how many.
    package mutating func discardBuffer() -> Int {
        let count = buffer.count - droppedHead
        buffer.removeAll(keepingCapacity: true)
        droppedHead = 0
        return count
    }

    /// Asks for the state to be saved soon. Returns whether the writer must be woken.
    package mutating func requestSave() -> Bool {
        saveNeeded = true
        return wakeIfWaiting()
    }

    /// Asks the writer to write and sync everything accepted so far (and with `stop`, to end afterwards);
    /// `done` is answered when it has. Returns nil when the writer has already ended (answer `done` at once),
    /// else whether the writer must be woken.
    package mutating func requestFlush(_ done: Promise<Bool>, stop: Bool) -> Bool? {
        if stopped { return nil }
        if stop { stopping = true }
        flushes.request(done, untilDrained: stop)
        return wakeIfWaiting()
    }

    /// Marks a waiting writer busy; whether it was waiting (and so must be woken).
    @inline(__always)
    private mutating func wakeIfWaiting() -> Bool {
        guard writerState != .busy else { return false }
        writerState = .busy
        return true
    }

    // MARK: The writer

    /// What the writer does next. `lingered`: its last step was a linger. A `write` step swaps the front buffer
    /// with `back` (which must be empty), so the events to write are in `back`.
    package mutating func nextStep(lingered: Bool, swappingWith back: inout [PendingEvent]) -> Step {
        let flushPending = flushes.isPending
        removeDroppedHead()
        if buffer.isEmpty, !flushPending, !saveNeeded, blockedProducers == 0 {
            if stopping {
                stopped = true
                return .exit(waiters: flushes.drain())
            }
            writerState = .idle
            return .waitIdle
        }
        if !lingered, !flushPending, !stopping, !saveNeeded, blockedProducers == 0, buffer.count < wakeThreshold {
            writerState = .lingering
            return .waitLinger
        }
        swap(&buffer, &back)
        let retired = self.retired
        self.retired = []
        let release = blockedProducers
        blockedProducers = 0
        writerState = .busy
        // Sequence numbers need no save: the writer leases them from the state file before using any.
        let save = saveNeeded
        saveNeeded = false
        return .write(flushGeneration: flushes.requested, sync: flushPending, save: save, release: release, retired: retired)
    }

    /// The writer synced everything up to `generation`: the flush waiters it answers.
    package mutating func completeFlush(through generation: UInt64) -> [Promise<Bool>] {
        flushes.complete(through: generation)
    }
}
