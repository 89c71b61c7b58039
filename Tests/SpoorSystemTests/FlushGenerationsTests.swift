import SpoorSystem
import Testing

@Suite struct FlushGenerationsTests {
    /// A request made while a flush runs waits for the next one: the flush that started earlier (covering
    /// generation 1) does not answer it.
    @Test func aRequestDuringAFlushWaitsForTheNextOne() {
        var generations = FlushGenerations<Int>()
        let early = Promise<Int>(), late = Promise<Int>()
        generations.request(early)
        let covered = generations.requested
        generations.request(late)
        #expect(generations.isPending)
        let answered = generations.complete(through: covered)
        #expect(answered.count == 1 && answered[0] === early)
        #expect(generations.isPending)
        let next = generations.complete(through: generations.requested)
        #expect(next.count == 1 && next[0] === late)
        #expect(!generations.isPending)
    }

    @Test func completionsNeverGoBackwards() {
        var generations = FlushGenerations<Int>()
        generations.request()
        generations.request()
        _ = generations.complete(through: 2)
        _ = generations.complete(through: 1)
        #expect(generations.completed == 2)
        #expect(!generations.isPending)
    }

    @Test func untilDrainedWaitersAreAnsweredOnlyByDrain() {
        var generations = FlushGenerations<Int>()
        let drained = Promise<Int>(), ordinary = Promise<Int>()
        generations.request(drained, untilDrained: true)
        generations.request(ordinary)
        #expect(generations.complete(through: generations.requested).map { $0 === ordinary } == [true])
        let rest = generations.drain()
        #expect(rest.count == 1 && rest[0] === drained)
        #expect(generations.drain().isEmpty)
    }
}
