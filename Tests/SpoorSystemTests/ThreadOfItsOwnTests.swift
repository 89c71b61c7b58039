import SpoorSystem
import Testing

@Suite("Threads of their own: blocking work off the cooperative pool", .timeLimit(.minutes(10)))
struct ThreadOfItsOwnTests {
    @Test("blocking bodies hold no thread of the cooperative pool: more of them wait at once than it has threads")
    func moreBlockedThanThePool() async {
        // The cooperative pool has as many threads as cores; were the bodies run on it, at most that many would
        // enter, `allEntered` would never be fulfilled and the wait below would end at the bound.
        let count = 16
        let entered = Locked(0)
        let allEntered = Promise<Bool>()
        let gate = Gate()
        async let passed = onThreadsOfTheirOwn(count) { _ -> Bool in
            if entered.withLock({ entered -> Bool in
                entered += 1
                return entered == count
            }) {
                allEntered.fulfil(true)
            }
            return gate.pass()
        }
        let all = await allEntered.value(orAfter: testBound, false)
        gate.open()
        #expect(all, "only \(entered.withLock { $0 }) of \(count) bodies were running at once")
        #expect(await passed == Array(repeating: true, count: count))
    }

    @Test("onThreadsOfTheirOwn returns each body's result at its index")
    func resultsInOrder() async {
        #expect(await onThreadsOfTheirOwn(5) { $0 * 10 } == [0, 10, 20, 30, 40])
        #expect(await onThreadsOfTheirOwn(0) { $0 }.isEmpty)
    }

    @Test("onThreadOfItsOwn returns what the body returns, and throws what it throws, typed")
    func resultOrError() async {
        struct Refused: Error, Equatable { var code: Int }
        #expect(await onThreadOfItsOwn { 6 * 7 } == 42)
        do throws(Refused) {
            _ = try await onThreadOfItsOwn { () throws(Refused) -> Int in throw Refused(code: 3) }
            Issue.record("the body's error was not thrown")
        } catch {
            #expect(error == Refused(code: 3))
        }
    }

    @Test("within a bound: the result when the body returns in time")
    func withinInTime() async {
        #expect(await onThreadOfItsOwn(within: testBound) { "done" } == "done")
    }

    @Test("within a bound: nil when the body is still blocked at the bound, and the body goes on afterwards")
    func withinPastTheBound() async {
        let gate = Gate()
        let returned = Promise<Bool>()
        // The body cannot return before the gate opens, which is after the call has answered: nil whatever the
        // machine's speed.
        let answer = await onThreadOfItsOwn(within: .milliseconds(1)) { () -> Int in
            returned.fulfil(gate.pass())
            return 1
        }
        #expect(answer == nil)
        gate.open()
        #expect(await returned.value(orAfter: testBound, false), "the body went on and passed the gate")
    }

    @Test("withLockIfAvailable answers nil without waiting while another thread holds the lock")
    func lockIfAvailable() async {
        let lock = Locked(0)
        let holding = Promise<Void>()
        let gate = Gate()
        let holder = Task {
            await onThreadOfItsOwn {
                lock.withLock { value in
                    holding.fulfil(())
                    _ = gate.pass()
                    value = 1
                }
            }
        }
        await holding.value
        let whileHeld = lock.withLockIfAvailable { $0 }
        gate.open()
        await holder.value
        #expect(whileHeld == nil)
        #expect(lock.withLockIfAvailable { $0 } == 1)
    }
}
