import Foundation
import SpoorUpload
import Synchronization

/// The uploader's time, moved only by the test: backoff, `Retry-After` and request timeouts pass when the
/// test says so, never by sleeping. A test can also wait until the uploader sleeps for a given duration
/// (its request timeout, say), so it advances the clock only once that timer is armed.
final class ManualUploadClock: UploadClock {
    private struct Sleeper {
        var id: Int
        var deadline: Duration
        var length: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var wall: Int64
        var nextID = 0
        var sleepers: [Sleeper] = []
        /// Every sleep asked for so far, by id.
        var history: [(id: Int, length: Duration)] = []
        var watchers: [Watcher] = []
    }

    private struct Watcher {
        var after: Int
        var matches: @Sendable (Duration) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private let state: Mutex<State>

    init(wall: Int64 = 1_800_000_000_000) {
        state = Mutex(State(wall: wall))
    }

    func now() -> Duration { state.withLock { $0.now } }

    func wallMilliseconds() -> Int64 { state.withLock { $0.wall } }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Registered first, then announced: a test that hears of this sleep can advance past it.
                let (due, watchers) = state.withLock { s -> (Bool, [CheckedContinuation<Void, Never>]) in
                    let due = Task.isCancelled || duration <= .zero
                    if !due {
                        s.sleepers.append(Sleeper(id: id, deadline: s.now + duration, length: duration, continuation: continuation))
                    }
                    s.history.append((id, duration))
                    let ready = s.watchers.filter { id > $0.after && $0.matches(duration) }.map(\.continuation)
                    s.watchers.removeAll { id > $0.after && $0.matches(duration) }
                    return (due, ready)
                }
                for watcher in watchers { watcher.resume() }
                if due {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time on, waking every sleep that is due.
    func advance(by duration: Duration) {
        let due = state.withLock { s -> [Sleeper] in
            s.now += duration
            s.wall += Int64(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
            let due = s.sleepers.filter { $0.deadline <= s.now }
            s.sleepers.removeAll { $0.deadline <= s.now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many sleeps were asked for so far: a mark for ``waitForSleep(after:matching:)``.
    var sleepCount: Int { state.withLock { $0.nextID } }

    /// Returns once a sleep asked for after the mark `after` has a length that `matches` (it may be over already).
    func waitForSleep(after mark: Int = 0, matching: @escaping @Sendable (Duration) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.history.contains(where: { $0.id > mark && matching($0.length) }) { return true }
                s.watchers.append(Watcher(after: mark, matches: matching, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// An HTTP date (`Retry-After`'s second form) `seconds` after this clock's wall time.
    func httpDate(after seconds: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(wallMilliseconds()) / 1000 + Double(seconds)))
    }
}
