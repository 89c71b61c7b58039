/// Flush requests and their waiters, counted in generations.
///
/// Each request gets the next generation number; a worker that starts a flush notes the newest generation it
/// covers, and when that flush is done every waiter of that generation or older is answered. A request that
/// arrives during a flush gets a newer generation, so it waits for the next flush: nothing accepted before a
/// request is ever reported flushed by a flush that started earlier. Kept inside the owner's ``Locked`` state;
/// the promises it returns are fulfilled after the lock is released.
package struct FlushGenerations<Outcome: Sendable>: Sendable {
    /// The newest generation requested.
    package private(set) var requested: UInt64 = 0
    /// The newest generation a finished flush covered.
    package private(set) var completed: UInt64 = 0
    private var waiters: [(generation: UInt64, promise: Promise<Outcome>)] = []

    package init() {}

    /// Whether a request is not yet covered by a finished flush.
    package var isPending: Bool { requested > completed }

    /// Records a request, and `waiter` to be answered when a flush covers it. A waiter `untilDrained` is answered
    /// only by ``drain()``, when the worker ends.
    package mutating func request(_ waiter: Promise<Outcome>? = nil, untilDrained: Bool = false) {
        requested += 1
        if let waiter { waiters.append((untilDrained ? .max : requested, waiter)) }
    }

    /// Notes that a flush covering every request up to `generation` finished, and returns the waiters it
    /// answers.
    package mutating func complete(through generation: UInt64) -> [Promise<Outcome>] {
        completed = max(completed, generation)
        let ready = waiters.filter { $0.generation <= generation }.map(\.promise)
        waiters.removeAll { $0.generation <= generation }
        return ready
    }

    /// Returns every waiter, for a worker that ends.
    package mutating func drain() -> [Promise<Outcome>] {
        defer { waiters = [] }
        return waiters.map(\.promise)
    }
}
