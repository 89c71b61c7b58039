import Foundation
import SpoorSystem
import Testing

@Suite struct PromiseTests {
    @Test func theFirstFulfilWinsAndEveryWaiterGetsIt() async {
        let promise = Promise<Int>()
        #expect(promise.current == nil)
        async let first = promise.value
        async let second = promise.value
        #expect(promise.fulfil(1))
        #expect(!promise.fulfil(2))
        #expect(await first == 1)
        #expect(await second == 1)
        #expect(await promise.value == 1)
        #expect(promise.current == 1)
    }

    @Test func aThreadWaitsUntilAnotherThreadFulfils() async {
        let promise = Promise<String>()
        let waited = Promise<String?>()
        Thread.detachNewThread { waited.fulfil(promise.wait(timeout: testBound)) }
        promise.fulfil("done")
        #expect(await waited.value == "done")
    }

    @Test func aThreadWaitGivesUpWithNilWhenNothingComes() {
        #expect(Promise<Int>().wait(timeout: .milliseconds(1)) == nil)
    }

    /// The deadline runs on the injected clock's sleep: the fallback is delivered when that sleep ends, and a value that
    /// comes first cancels the timer (its sleep sees the cancellation).
    @Test func valueOrAfterTakesWhicheverComesFirst() async {
        let gate = Promise<Void>()
        let asked = Promise<Duration>()
        let sleep: @Sendable (Duration) async throws -> Void = { duration in
            asked.fulfil(duration)
            await gate.value
            try Task.checkCancellation()
        }
        let timedOut = Promise<Int>()
        async let fallback = timedOut.value(orAfter: .seconds(7), -1, clock: SleepOnlyClock(sleep: sleep))
        #expect(await asked.value == .seconds(7))
        gate.fulfil(())
        #expect(await fallback == -1)

        let answered = Promise<Int>()
        let timerStarted = Promise<Void>(), cancelled = Promise<Bool>()
        // The timer's sleep ends only when cancelled (were it never cancelled, the wait for `cancelled` below fails).
        async let value = answered.value(orAfter: .seconds(7), -1, clock: SleepOnlyClock { _ in
            timerStarted.fulfil(())
            let woken = Promise<Void>()
            await withTaskCancellationHandler { await woken.value } onCancel: { woken.fulfil(()) }
            cancelled.fulfil(true)
            throw CancellationError()
        })
        // Once the timer runs, the value comes: it wins, and the timer is cancelled.
        await timerStarted.value
        answered.fulfil(5)
        #expect(await value == 5)
        #expect(await cancelled.value(orAfter: testBound, false))
    }
}

/// A clock whose sleep is the test's own: SpoorSystem's tests cannot use SpoorTesting's manual clock (it is built
/// on SpoorSystem), and these need no reading of time.
private struct SleepOnlyClock: SpoorClock {
    let sleep: @Sendable (Duration) async throws -> Void
    func now() -> Duration { .zero }
    func wallMilliseconds() -> Int64 { 0 }
    func sleep(for duration: Duration) async throws { try await sleep(duration) }
}
