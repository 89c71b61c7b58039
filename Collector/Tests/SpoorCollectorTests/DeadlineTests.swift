import Dispatch
import SpoorCollectorCore
import Synchronization
import Testing

@Suite("withDeadline: the result in time, else a cancelled operation that has ended")
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
        let started = ContinuousClock.now
        await #expect(throws: DeadlineExceeded(timeout: .milliseconds(50))) {
            try await withDeadline(.milliseconds(50)) {
                defer { ended.store(true, ordering: .releasing) }
                // Ends only through cancellation.
                try await Task.sleep(for: .seconds(3600))
            }
        }
        let endedFirst = ended.load(ordering: .acquiring)
        #expect(endedFirst, "nothing outlives the call")
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test("an operation that ignores cancellation is waited for: its result is dropped and the deadline reported")
    func slowToStop() async throws {
        let ended = Atomic<Bool>(false)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(20)) {
                // Work that cancellation does not interrupt: it ends 200 ms in, whatever happens.
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { continuation.resume() }
                }
                ended.store(true, ordering: .releasing)
                return 1
            }
        }
        let endedFirst = ended.load(ordering: .acquiring)
        #expect(endedFirst)
    }
}
