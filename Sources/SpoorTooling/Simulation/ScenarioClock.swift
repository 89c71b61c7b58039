import SpoorModel
import SpoorSystem
import SpoorTracker

/// The time of a replayed scenario: it stands still between actions and moves only when the simulator advances it
/// to the next action's `t`, so a scenario replays to the same events on any machine. The simulator's own clock
/// (not a test double: replay is what `spoor simulate` ships), so SpoorTooling needs nothing from SpoorTesting.
final class ScenarioClock: WallClock, MonotonicClock, Sendable {
    private struct Reading {
        var wall: EpochMilliseconds
        var monotonic: UInt64
    }

    private let reading: Locked<Reading>

    /// A clock that reads `wall` (milliseconds since the epoch) and `monotonic` (nanoseconds) until advanced.
    init(wall: EpochMilliseconds, monotonic: UInt64) {
        reading = Locked(Reading(wall: wall, monotonic: monotonic))
    }

    func nowMilliseconds() -> EpochMilliseconds { reading.withLock { $0.wall } }

    func nowNanoseconds() -> UInt64 { reading.withLock { $0.monotonic } }

    /// Moves both readings forward by `milliseconds` (never back).
    func advance(milliseconds: Int64) {
        guard milliseconds > 0 else { return }
        reading.withLock {
            $0.monotonic += UInt64(milliseconds) * 1_000_000
            $0.wall += EpochMilliseconds(milliseconds)
        }
    }
}
