import SpoorSystem
import Testing

@Suite("Promise: a value delivered once, to every waiter", .timeLimit(.minutes(10)))
struct PromiseTests {
    @Test("the first fulfil wins; later ones are ignored and say so")
    func firstWins() async {
        let promise = Promise<Int>()
        #expect(promise.current == nil)
        #expect(promise.fulfil(1))
        #expect(!promise.fulfil(2))
        #expect(promise.current == 1)
        #expect(await promise.value == 1)
    }

    @Test("tasks waiting before and after the value get the same value")
    func everyWaiter() async {
        let promise = Promise<String>()
        async let early = promise.value
        async let alsoEarly = promise.value
        promise.fulfil("ready")
        #expect(await early == "ready")
        #expect(await alsoEarly == "ready")
        #expect(await promise.value == "ready")
    }

    @Test("value(orAfter:): the fallback when the deadline comes first, for every waiter")
    func deadlineFirst() async {
        let promise = Promise<Int>()
        // The deadline's sleep returns at once: the promise has no value yet, so the fallback is delivered.
        let value = await promise.value(orAfter: .seconds(1), -1, sleep: { _ in })
        #expect(value == -1)
        #expect(!promise.fulfil(5), "the deadline's fallback was the one value")
        #expect(await promise.value == -1)
    }

    @Test("value(orAfter:): the value when it comes first, and the deadline's timer is cancelled")
    func valueFirst() async {
        let promise = Promise<Int>()
        let timerCancelled = Promise<Bool>()
        promise.fulfil(7)
        #expect(await promise.value(orAfter: .seconds(1), -1) == 7)
        // Not yet fulfilled: the timer starts, and is cancelled once the value arrives.
        let other = Promise<Int>()
        let timerStarted = Promise<Void>()
        async let value = other.value(orAfter: .seconds(300), -1, sleep: { duration in
            timerStarted.fulfil(())
            do {
                try await Task.sleep(for: duration)
            } catch {
                timerCancelled.fulfil(true)
                throw error
            }
        })
        await timerStarted.value
        other.fulfil(8)
        #expect(await value == 8)
        #expect(await timerCancelled.value(orAfter: bound, false))
    }

    @Test("wait(timeout:) from a thread: the value once delivered, nil at the timeout")
    func threadWait() async {
        let promise = Promise<Int>()
        #expect(await onThreadOfItsOwn { promise.wait(timeout: .milliseconds(1)) } == nil)
        let waited = Task { await onThreadOfItsOwn { promise.wait(timeout: bound) } }
        promise.fulfil(3)
        #expect(await waited.value == 3)
    }
}
