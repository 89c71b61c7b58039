import SpoorModel
import SpoorSystem
import Testing

import SpoorTracker

/// The writer's queue on its own: when the writer is woken, what each of its steps does, flushes and the stop.
@Suite("WriterQueue")
struct WriterQueueTests {
    static func queue(limit: Int = 8, wakeThreshold: Int = 4) -> WriterQueue {
        WriterQueue(nextSequence: 10, memoryLimit: limit, wakeThreshold: wakeThreshold, capacity: 8)
    }

    static func event(_ name: String) -> PendingEvent {
        PendingEvent(
            name: name, type: .track, method: .code, time: 0, properties: [:], dynamicProperties: nil,
            hasDollarKey: false, originalID: nil)
    }

    /// Appends `name` as a caller would; whether the writer is to be woken.
    static func append(_ name: String, to queue: inout WriterQueue) -> Bool {
        #expect(queue.admit(optedOut: false) == .open)
        var event = event(name)
        event.sequence = queue.takeSequence()
        let wake = queue.append(&event)
        #expect(event.name.isEmpty, "the event is moved, not copied")
        return wake
    }

    /// Runs the writer's decision until it waits: the steps and the names written.
    static func drain(_ queue: inout WriterQueue) -> (steps: [String], written: [String]) {
        var steps: [String] = []
        var written: [String] = []
        var back: [PendingEvent] = []
        var lingered = false
        while steps.count < 10 {
            let step = queue.nextStep(lingered: lingered, swappingWith: &back)
            lingered = false
            switch step {
            case .waitIdle:
                steps.append("idle")
                return (steps, written)
            case .waitLinger:
                steps.append("linger")
                lingered = true
            case .write(let generation, let sync, let save, let release, _):
                steps.append("write\(sync ? " sync" : "")\(save ? " save" : "")\(release > 0 ? " release \(release)" : "")")
                written += back.map(\.name)
                back.removeAll()
                if sync { _ = queue.completeFlush(through: generation) }
            case .exit(let waiters):
                steps.append("exit \(waiters.count)")
                return (steps, written)
            }
        }
        return (steps, written)
    }

    @Test func anIdleWriterIsWokenByTheFirstEventOnly() {
        var queue = Self.queue()
        #expect(Self.drain(&queue).steps == ["idle"])
        #expect(Self.append("a", to: &queue))
        #expect(!Self.append("b", to: &queue))
        #expect(queue.accepted == 2)
        #expect(queue.nextSequence == 12)
    }

    @Test func aSmallBatchLingersOnceThenIsWritten() {
        var queue = Self.queue()
        _ = Self.append("a", to: &queue)
        let (steps, written) = Self.drain(&queue)
        #expect(steps == ["linger", "write", "idle"])
        #expect(written == ["a"])
    }

    @Test func aLingeringWriterIsWokenAtTheThreshold() {
        var queue = Self.queue(wakeThreshold: 3)
        var back: [PendingEvent] = []
        _ = Self.append("a", to: &queue)
        guard case .waitLinger = queue.nextStep(lingered: false, swappingWith: &back) else {
            Issue.record("a small batch lingers")
            return
        }
        #expect(!Self.append("b", to: &queue))
        #expect(Self.append("c", to: &queue))
        #expect(queue.writerState == .busy)
    }

    @Test func callersWaitAtTheBoundAndAreReleasedByTheNextWrite() {
        var queue = Self.queue(limit: 2)
        #expect(Self.drain(&queue).steps == ["idle"])
        _ = Self.append("a", to: &queue)
        _ = Self.append("b", to: &queue)
        #expect(queue.admit(optedOut: false) == .full(wakeWriter: false))  // the first event woke it already
        #expect(queue.admit(optedOut: false) == .full(wakeWriter: false))
        let (steps, written) = Self.drain(&queue)
        #expect(steps == ["write release 2", "idle"])
        #expect(written == ["a", "b"])
        #expect(queue.admit(optedOut: false) == .open)
    }

    @Test func optedOutEventsAreDeclinedAndNotCounted() {
        var queue = Self.queue(limit: 1)
        _ = Self.append("a", to: &queue)
        #expect(queue.admit(optedOut: true) == .declined)
        #expect(queue.droppedAfterShutdown == 0)
        #expect(queue.accepted == 1)
    }

    @Test func aFlushSyncsAndSavesOnlyWhatAskedForASave() {
        var queue = Self.queue()
        _ = Self.append("a", to: &queue)
        let done = Promise<Bool>()
        #expect(queue.requestFlush(done, stop: false) == false)  // the writer is busy (never parked yet)
        // Events alone need no save: their sequence numbers are leased by the writer, not saved after them.
        #expect(Self.drain(&queue).steps == ["write sync", "idle"])
        _ = queue.requestSave()
        #expect(queue.requestFlush(Promise<Bool>(), stop: false) == false)
        #expect(Self.drain(&queue).steps == ["write sync save", "idle"])
    }

    @Test func flushWaitersAreAnsweredByTheFlushThatCoversThem() {
        var queue = Self.queue()
        var back: [PendingEvent] = []
        let first = Promise<Bool>()
        _ = queue.requestFlush(first, stop: false)
        guard case .write(let generation, true, _, _, _) = queue.nextStep(lingered: false, swappingWith: &back) else {
            Issue.record("a flush writes and syncs")
            return
        }
        let second = Promise<Bool>()  // asked during the first flush: it waits for the next
        _ = queue.requestFlush(second, stop: false)
        let answered = queue.completeFlush(through: generation)
        #expect(answered.count == 1 && answered[0] === first)
    }

    @Test func aSaveRequestWakesTheWriterAndIsWrittenWithoutLingering() {
        var queue = Self.queue()
        #expect(Self.drain(&queue).steps == ["idle"])
        let first = queue.requestSave()
        let second = queue.requestSave()
        #expect(first)
        #expect(!second, "the writer is busy after the first")
        #expect(Self.drain(&queue).steps == ["write save", "idle"])
    }

    @Test func theStopWritesEverythingThenEndsAndRefusesLaterEvents() {
        var queue = Self.queue()
        _ = Self.append("a", to: &queue)
        let done = Promise<Bool>()
        _ = queue.requestFlush(done, stop: true)
        #expect(queue.admit(optedOut: false) == .stopped)
        #expect(queue.droppedAfterShutdown == 1)
        let (steps, written) = Self.drain(&queue)
        #expect(steps == ["write sync", "exit 1"])
        #expect(written == ["a"])
        #expect(queue.stopped)
        #expect(queue.requestFlush(Promise<Bool>(), stop: false) == nil)
    }

    @Test func retiredObjectsLiveUntilTheWriteOfTheEventsBeforeThem() {
        var queue = Self.queue()
        _ = Self.append("a", to: &queue)
        let old = Session(id: "old")
        queue.retire(old)
        var back: [PendingEvent] = []
        guard case .write(_, _, _, _, let retired) = queue.nextStep(lingered: true, swappingWith: &back) else {
            Issue.record("a lingered batch is written")
            return
        }
        #expect(retired.count == 1 && retired[0] === old)
    }

    @Test func discardingTheBufferReportsHowManyWent() {
        var queue = Self.queue()
        _ = Self.append("a", to: &queue)
        _ = Self.append("b", to: &queue)
        #expect(queue.discardBuffer() == 2)
        #expect(queue.waiting.isEmpty)
        #expect(queue.accepted == 2)
    }
}
