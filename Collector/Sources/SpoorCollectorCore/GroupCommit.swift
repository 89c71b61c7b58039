package import Metrics
import SpoorSystem

/// Group commit: the batches of concurrent requests go into one transaction, one group at a time, so a store
/// pays one commit (one fsync, one round trip) per group instead of per request.
///
/// There is no writer task: the request that finds no group being written becomes the leader, commits its own
/// batch with every batch waiting (up to ``Limits/maxEvents`` events), answers them all, and hands the lead to the
/// oldest request still waiting, whose batch heads the next group. Meanwhile new requests wait, so under load a
/// group holds what arrived during the previous commit, and alone a request commits at once. Each request is
/// answered only after the group holding its batch committed; a batch id twice in one group is stored once and
/// its later copies are answered as duplicates. Decoding stays in each request's task, on every core; writing
/// is one group at a time.
public final class GroupCommit: Sendable {
    /// How large a group may grow.
    public struct Limits: Sendable, Hashable {
        /// The most events in one group (a group holds at least one batch, however large).
        public var maxEvents: Int
        /// The most bytes in one group, its batches' frames and row text (a group holds at least one batch): what one
        /// transaction, or one PostgreSQL statement's parameters, may hold.
        public var maxBytes: Int
        /// How long a leader waits for more batches before committing when its group is not full; zero commits at
        /// once, which under load already gathers what arrived during the previous commit.
        public var maxWait: Duration
        /// How many groups may be written at once: 1, one writer per store, unless the store's server can take
        /// more (PostgreSQL uses one connection, and so one server process, per group being written).
        public var writers: Int

        /// Creates limits: by default 20,000 events, 64 MiB, no wait and one writer.
        public init(maxEvents: Int = 20_000, maxBytes: Int = 64 << 20, maxWait: Duration = .zero, writers: Int = 1) {
            self.maxEvents = maxEvents
            self.maxBytes = maxBytes
            self.maxWait = maxWait
            self.writers = max(1, writers)
        }
    }

    /// Commits one group (distinct batch ids) in one transaction.
    public typealias Commit = @Sendable ([BatchRecord]) async throws(StoreUnavailable) -> [InsertResult]

    private enum Turn: Sendable {
        case answered(Result<InsertResult, StoreUnavailable>)
        case lead
    }

    private struct Waiter: Sendable {
        var batch: BatchRecord
        var continuation: CheckedContinuation<Turn, Never>
    }

    private struct State: Sendable {
        var waiting: [Waiter] = []
        /// Groups being written now, at most `Limits.writers`.
        var leaders = 0
    }

    /// The limits each group keeps to.
    public let limits: Limits
    private let commit: Commit
    private let state = Locked(State())
    private let groupBatches: Recorder
    private let groupEvents: Recorder
    private let commitTime: Metrics.Timer
    private let waitingGauge: Gauge
    private let onWaiting: @Sendable (Int) -> Void

    /// A group commit for the store named `store` (a metrics dimension), committing through `commit`.
    /// `onWaiting` hears, after each change, how many batches wait for the group being written to finish.
    public init(
        store: String, limits: Limits = Limits(), onWaiting: @escaping @Sendable (Int) -> Void = { _ in },
        commit: @escaping Commit
    ) {
        self.limits = limits
        self.commit = commit
        self.onWaiting = onWaiting
        waitingGauge = Gauge(label: "spoor_collector_group_waiting_batches", dimensions: [("store", store)])
        groupBatches = Recorder(label: "spoor_collector_group_batches", dimensions: [("store", store)])
        groupEvents = Recorder(label: "spoor_collector_group_events", dimensions: [("store", store)])
        commitTime = Metrics.Timer(label: "spoor_collector_commit_seconds", dimensions: [("store", store)])
    }

    /// Stores `batch` with the group it joins; returns once that group committed.
    public func insert(_ batch: BatchRecord) async throws(StoreUnavailable) -> InsertResult {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let waiting = state.withLock { state -> Int? in
                guard state.leaders == limits.writers else {
                    state.leaders += 1
                    return nil
                }
                state.waiting.append(Waiter(batch: batch, continuation: continuation))
                return state.waiting.count
            }
            if let waiting {
                report(waiting)
            } else {
                continuation.resume(returning: .lead)
            }
        }
        switch turn {
        case .answered(let result): return try result.get()
        case .lead: return try await lead(with: batch).get()
        }
    }

    /// Commits `own` with the batches waiting, answers them, and hands the lead on.
    private func lead(with own: BatchRecord) async -> Result<InsertResult, StoreUnavailable> {
        if limits.maxWait > .zero, waitingEvents() + own.eventCount < limits.maxEvents {
            try? await Task.sleep(for: limits.maxWait)
        }
        let (joined, left) = state.withLock { state in
            var events = own.eventCount
            var bytes = own.heldBytes
            var taken = 0
            for waiter in state.waiting {
                guard events + waiter.batch.eventCount <= limits.maxEvents, bytes + waiter.batch.heldBytes <= limits.maxBytes else { break }
                events += waiter.batch.eventCount
                bytes += waiter.batch.heldBytes
                taken += 1
            }
            defer { state.waiting.removeFirst(taken) }
            return (Array(state.waiting.prefix(taken)), state.waiting.count - taken)
        }
        report(left)
        let group = BatchGroup([own] + joined.map(\.batch))
        let start = ContinuousClock.now
        let results: Result<[InsertResult], StoreUnavailable>
        do throws(StoreUnavailable) {
            let committed = try await commit(group.distinct)
            guard committed.count == group.distinct.count else {
                throw StoreUnavailable("the store answered \(committed.count) results for \(group.distinct.count) batches")
            }
            results = .success(committed)
        } catch {
            results = .failure(error)
        }
        commitTime.recordInterval(since: start)
        groupBatches.record(group.distinct.count)
        groupEvents.record(group.distinct.reduce(0) { $0 + $1.eventCount })
        let answers = group.answers(results)
        for (index, waiter) in joined.enumerated() { waiter.continuation.resume(returning: .answered(answers[index + 1])) }
        let (next, waiting) = state.withLock { state -> (Waiter?, Int) in
            guard !state.waiting.isEmpty else {
                state.leaders -= 1
                return (nil, 0)
            }
            return (state.waiting.removeFirst(), state.waiting.count)
        }
        report(waiting)
        next?.continuation.resume(returning: .lead)
        return answers[0]
    }

    private func report(_ waiting: Int) {
        waitingGauge.record(waiting)
        onWaiting(waiting)
    }

    private func waitingEvents() -> Int {
        state.withLock { $0.waiting.reduce(0) { $0 + $1.batch.eventCount } }
    }
}

/// A group of batches whose ids may repeat: each id is committed once, its later copies answered as duplicates.
public struct BatchGroup: Sendable {
    /// The batches to commit, one per id, in first-seen order.
    public private(set) var distinct: [BatchRecord] = []
    /// For each batch given, the index of its id in ``distinct`` and whether it is a later copy.
    private var slots: [(index: Int, repeated: Bool)] = []

    /// Groups `batches`.
    public init(_ batches: [BatchRecord]) {
        var seen: [String: Int] = [:]
        for batch in batches {
            if let index = seen[batch.batchID] {
                slots.append((index, true))
            } else {
                seen[batch.batchID] = distinct.count
                slots.append((distinct.count, false))
                distinct.append(batch)
            }
        }
    }

    /// The answer for each batch given, from the commit's results for ``distinct``.
    public func answers(_ results: Result<[InsertResult], StoreUnavailable>) -> [Result<InsertResult, StoreUnavailable>] {
        slots.map { slot in
            results.map { results in slot.repeated ? .duplicate : results[slot.index] }
        }
    }
}

extension Metrics.Timer {
    /// Records the time since `start`: how every store and route of the collector times itself.
    package func recordInterval(since start: ContinuousClock.Instant) {
        recordNanoseconds((ContinuousClock.now - start).nanoseconds)
    }
}
