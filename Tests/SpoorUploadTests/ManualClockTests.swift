import SpoorSystem
import SpoorTesting
import Testing

/// The one manual clock: the monotonic and wall readings move together, the wall can be set alone, and sleepers
/// wake in deadline order when time passes them.
@Suite struct ManualClockTests {
    @Test func advanceMovesBothReadingsAndSetWallMovesTheWallAlone() {
        let clock = ManualClock(wall: 1_700_000_000_000, monotonic: .seconds(1))
        clock.advance(by: .milliseconds(1500))
        #expect(clock.now() == .milliseconds(2500))
        #expect(clock.wallMilliseconds() == 1_700_000_001_500)

        // Small steps lose no fraction of a millisecond.
        for _ in 0..<4 { clock.advance(by: .microseconds(250)) }
        #expect(clock.wallMilliseconds() == 1_700_000_001_501)

        clock.setWall(1_600_000_000_000)  // the user sets the device's time back
        #expect(clock.now() == .microseconds(2_501_000))
        #expect(clock.wallMilliseconds() == 1_600_000_000_000)
        clock.advance(by: .seconds(2))
        #expect(clock.wallMilliseconds() == 1_600_000_002_000)

        clock.advance(by: .seconds(-5))  // ignored: time does not run backwards
        #expect(clock.now() == .microseconds(4_501_000))
    }

    @Test func sleepersWakeWhenTimePassesTheirDeadlineAndAreListedEarliestFirst() async {
        let clock = ManualClock()
        let order = Locked<[Int]>([])
        let long = Task { try await clock.sleep(for: .seconds(10)); order.withLock { $0.append(10) } }
        #expect(await clock.sleepers(atLeast: 1))
        let short = Task { try await clock.sleep(for: .seconds(3)); order.withLock { $0.append(3) } }
        #expect(await clock.sleepers(atLeast: 2))
        #expect(clock.pendingDelays == [.seconds(3), .seconds(10)])

        clock.advance(by: .seconds(2))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(1))
        _ = await short.result
        #expect(order.withLock { $0 } == [3])
        #expect(await clock.sleeper(exactly: .seconds(7)))
        clock.advance(by: .seconds(7))
        _ = await long.result
        #expect(order.withLock { $0 } == [3, 10])
        #expect(clock.requested == [.seconds(10), .seconds(3)])
    }

    @Test func aCancelledSleeperThrowsAndLeaves() async {
        let clock = ManualClock()
        let sleeping = Task { try await clock.sleep(for: .seconds(60)) }
        #expect(await clock.sleepers(atLeast: 1))
        sleeping.cancel()
        let result = await sleeping.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(await clock.noSleepers())
    }
}
