import Foundation
import SpoorCollectorCore
import SpoorSystem
import Synchronization
import Testing

@Suite("withDeadline: the result in time, else a cancelled operation that has ended", .timeLimit(.minutes(10)))
struct DeadlineTests {
    struct Refused: Error, Equatable {}

    @Test("an operation that ends in time gives its result, or its error")
    func inTime() async throws {
        #expect(try await withDeadline(.seconds(60)) { 42 } == 42)
        await #expect(throws: Refused()) { try await withDeadline(.seconds(60)) { throw Refused() } }
    }

    @Test("past the deadline the operation is cancelled and has ended before DeadlineExceeded is thrown")
    func pastTheDeadline() async throws {
        let ended = Atomic<Bool>(false)
        let cancelled = Atomic<Bool>(false)
        await #expect(throws: DeadlineExceeded(timeout: .milliseconds(50))) {
            try await withDeadline(.milliseconds(50)) {
                defer { ended.store(true, ordering: .releasing) }
                // Ends through cancellation and nothing else; were it never cancelled, the suite's time limit would
                // fail the test instead of letting it hang.
                let woken = Promise<Void>()
                await withTaskCancellationHandler {
                    await woken.value
                } onCancel: {
                    cancelled.store(true, ordering: .releasing)
                    woken.fulfil(())
                }
            }
        }
        let endedFirst = ended.load(ordering: .acquiring)
        #expect(endedFirst, "nothing outlives the call")
        let wasCancelled = cancelled.load(ordering: .acquiring)
        #expect(wasCancelled, "the operation was cancelled, not waited out")
    }

    @Test("an operation that ignores cancellation is waited for: its result is dropped and the deadline reported")
    func slowToStop() async throws {
        let ended = Atomic<Bool>(false)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(20)) {
                // Work that cancellation does not interrupt: another thread ends it, some time after it was
                // cancelled, so however late the deadline fires, it comes first.
                let stop = Promise<Void>()
                await withTaskCancellationHandler {
                    await stop.value
                } onCancel: {
                    Thread.detachNewThread { stop.fulfil(()) }
                }
                ended.store(true, ordering: .releasing)
                return 1
            }
        }
        let endedFirst = ended.load(ordering: .acquiring)
        #expect(endedFirst)
    }
}
