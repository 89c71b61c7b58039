public import SpoorUpload
import SpoorSystem

/// An `UploadClock` that moves only when a test says so. Sleepers wake when ``advance(by:)`` passes their
/// deadline; a test awaits ``sleepers(atLeast:timeout:)`` to know the uploader is waiting, instead of sleeping.
public final class ManualUploadClock: UploadClock, Sendable {
    private struct State {
        var current: Duration = .zero
        var nextID = 0
        var sleeping: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var requested: [Duration] = []
    }

    private let state = Locked(State())
    private let wallStart: Int64
    private let watchers = ConditionWatchers()

    /// Creates a clock at monotonic zero and wall time `wallStart` (milliseconds since the epoch).
    public init(wallStart: Int64 = 1_700_000_000_000) {
        self.wallStart = wallStart
    }

    /// Every duration asked of ``sleep(for:)``, in order.
    public var requested: [Duration] { state.withLock { $0.requested } }

    public func now() -> Duration { state.withLock { $0.current } }

    public func wallMilliseconds() -> Int64 {
        wallStart + state.withLock { $0.current }.milliseconds
    }

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
                    s.sleeping[id] = (s.current + duration, continuation)
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

    /// Moves time forward, waking every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.current += duration
            let now = s.current
            let due = s.sleeping.filter { $0.value.deadline <= now }
            for key in due.keys { s.sleeping[key] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
        watchers.check()
    }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleeping.count } }

    /// The deadlines (from now) of the sleepers, shortest first.
    public var pendingDelays: [Duration] {
        state.withLock { s in s.sleeping.values.map { $0.deadline - s.current }.sorted() }
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

    /// How many sleeps were asked for so far: a mark for ``sleepRequested(after:timeout:matching:)``.
    public var sleepCount: Int { state.withLock { $0.requested.count } }

    /// Waits until a sleep asked for after the first `mark` ones has a length that `matches` (it may be over
    /// already); false after `timeout` of real time.
    public func sleepRequested(
        after mark: Int = 0, timeout: Duration = .seconds(300), matching: @escaping @Sendable (Duration) -> Bool
    ) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in requested.dropFirst(mark).contains(where: matching) }
    }

    /// Waits until some task sleeps with exactly `delay` left; false after `timeout` of real time.
    public func sleeper(exactly delay: Duration, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in pendingDelays.contains(delay) }
    }
}
