import SpoorModel
import SpoorSystem
import SpoorTracker

/// The time of a replayed scenario: it stands still between actions and moves only when the simulator advances it
/// to the next action's `t`, so a scenario replays to the same events on any machine. The simulator's own clock
/// (not a test double: replay is what `spoor simulate` ships), so SpoorTooling needs nothing from SpoorTesting.
///
/// Only the readings are the scenario's. A wait (the deadline of a flush or a shutdown the simulator asks for) runs
/// on real time: no action moves the scenario's time while the simulator waits, so a wait on it would never end.
final class ScenarioClock: SpoorClock {
    private struct Reading {
        var wall: Int64
        var monotonic: Duration
    }

    private let reading: Locked<Reading>

    /// A clock that reads `wall` (milliseconds since the epoch) and `monotonic` until advanced.
    init(wall: EpochMilliseconds, monotonic: Duration) {
        reading = Locked(Reading(wall: wall, monotonic: monotonic))
    }

    func now() -> Duration { reading.withLock { $0.monotonic } }

    func wallMilliseconds() -> Int64 { reading.withLock { $0.wall } }

    func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }

    /// Moves both readings forward by `milliseconds` (never back).
    func advance(milliseconds: Int64) {
        guard milliseconds > 0 else { return }
        reading.withLock {
            $0.monotonic += .milliseconds(milliseconds)
            $0.wall += milliseconds
        }
    }
}
