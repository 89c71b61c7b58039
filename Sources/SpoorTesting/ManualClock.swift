public import SpoorSystem

/// A ``/SpoorSystem/SpoorClock`` that moves only when a test says so: the one clock a test gives the tracker,
/// its log, its uploader and ``/SpoorSystem/Promise`` deadlines.
///
/// ``advance(by:)`` moves the monotonic and the wall readings together, as real time would, and wakes every
/// sleeper whose deadline has come; ``setWall(_:)`` moves the wall clock alone, as when the user changes the
/// device's time. A test that must know the code under test is waiting on the clock awaits
/// ``sleepers(atLeast:timeout:)``, ``sleeper(within:timeout:)`` or ``sleepRequested(after:timeout:matching:)``
/// rather than sleeping.
///
/// A tracker driven by one does not refresh its lifecycle checkpoint on a timer: set
/// `configuration.autoTrack.heartbeatInterval` to nil and call `Tracker.noteAlive()` where the scenario says
/// time passed with the app alive.
/// ```swift
/// let clock = ManualClock(wall: 1_700_000_000_000)
/// var configuration = Configuration(storageDirectory: directory)
/// configuration.clock = clock                       // SpoorTesting's door to the tracker's clock
/// clock.advance(by: .seconds(90))
/// ```
public final class ManualClock: SpoorClock, Sendable {
    private struct Sleeper {
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var monotonic: Duration
        /// The wall reading at `monotonicAtWall`: the wall clock is that plus the monotonic time since, so
        /// advancing in small steps loses no fraction of a millisecond.
        var wall: Int64
        var monotonicAtWall: Duration
        var nextID = 0
        var sleeping: [Int: Sleeper] = [:]
        var requested: [Duration] = []

        var wallNow: Int64 { wall + (monotonic - monotonicAtWall).milliseconds }
    }

    private let state: Locked<State>
    private let watchers = ConditionWatchers()

    /// Creates a clock reading `wall` milliseconds since the epoch and `monotonic` time since its origin.
    public init(wall: Int64 = 1_700_000_000_000, monotonic: Duration = .seconds(1)) {
        state = Locked(State(monotonic: monotonic, wall: wall, monotonicAtWall: monotonic))
    }

    public func now() -> Duration { state.withLock { $0.monotonic } }

    public func wallMilliseconds() -> Int64 { state.withLock { $0.wallNow } }

    public func sleep(for duration: Duration) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.requested.append(duration)
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case asleep, due, cancelled }
                let outcome = state.withLock { s -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    if duration <= .zero { return .due }
                    s.sleeping[id] = Sleeper(deadline: s.monotonic + duration, continuation: continuation)
                    return .asleep
                }
                switch outcome {
                case .asleep: watchers.check()
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let continuation = state.withLock { $0.sleeping.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
            watchers.check()
        }
    }

    /// Moves both readings forward by `duration` (a negative one is ignored) and wakes every sleeper whose
    /// deadline has come, earliest first.
    public func advance(by duration: Duration) {
        guard duration >= .zero else { return }
        let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.monotonic += duration
            let now = s.monotonic
            let due = s.sleeping.filter { $0.value.deadline <= now }
            for key in due.keys { s.sleeping[key] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
        watchers.check()
    }

    /// Sets the wall clock alone, as when the user changes the device's time; monotonic time and the sleepers
    /// are unaffected.
    public func setWall(_ milliseconds: Int64) {
        state.withLock {
            $0.wall = milliseconds
            $0.monotonicAtWall = $0.monotonic
        }
    }

    /// Every duration asked of ``sleep(for:)``, in order.
    public var requested: [Duration] { state.withLock { $0.requested } }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleeping.count } }

    /// The deadlines (from now) of the sleepers, shortest first.
    public var pendingDelays: [Duration] {
        state.withLock { s in s.sleeping.values.map { $0.deadline - s.monotonic }.sorted() }
    }

    /// Waits until at least `count` tasks sleep on this clock; false if that did not happen within `timeout`
    /// of real time (generous: a loaded test run can hold tasks back).
    public func sleepers(atLeast count: Int, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in sleeperCount >= count }
    }

    /// Waits until no task sleeps on this clock; false if some still did after `timeout` of real time.
    public func noSleepers(timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in sleeperCount == 0 }
    }

    /// Waits until some task sleeps with at most `delay` left; false after `timeout` of real time.
    public func sleeper(within delay: Duration, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in pendingDelays.contains { $0 <= delay } }
    }

    /// Waits until some task sleeps with exactly `delay` left; false after `timeout` of real time.
    public func sleeper(exactly delay: Duration, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in pendingDelays.contains(delay) }
    }

    /// How many sleeps were asked for so far: a mark for ``sleepRequested(after:timeout:matching:)``.
    public var sleepCount: Int { state.withLock { $0.requested.count } }

    /// Waits until a sleep asked for after the first `mark` ones has a length that `matches` (it may be over
    /// already); false after `timeout` of real time.
    public func sleepRequested(
        after mark: Int = 0, timeout: Duration = .seconds(300), matching: @escaping @Sendable (Duration) -> Bool
    ) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in requested.dropFirst(mark).contains(where: matching) }
    }
}
