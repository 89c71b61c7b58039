import Dispatch
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
                // Ends through cancellation; were it not cancelled, it would end by itself minutes later, and the
                // test would fail then instead of hanging.
                do {
                    try await Task.sleep(for: .seconds(240))
                } catch is CancellationError {
                    cancelled.store(true, ordering: .releasing)
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
                // Work that cancellation does not interrupt, and that ends only after it was cancelled (a while
                // after: on another thread), so however late the timer fires, the deadline comes first.
                let stop = Promise<Void>()
                await withTaskCancellationHandler {
                    await stop.value
                } onCancel: {
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { stop.fulfil(()) }
                }
                ended.store(true, ordering: .releasing)
                return 1
            }
        }
        let endedFirst = ended.load(ordering: .acquiring)
        #expect(endedFirst)
    }
}
