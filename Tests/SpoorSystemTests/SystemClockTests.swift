import Foundation
import SpoorSystem
import Testing

@Suite struct SystemClockTests {
    /// The wall reading is Foundation's time in milliseconds, and the monotonic one never goes back.
    @Test func readingsAgreeWithTheSystem() {
        let clock = SystemClock()
        let before = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let wall = clock.wallMilliseconds()
        let after = Int64((Date().timeIntervalSince1970 * 1000).rounded(.up))
        #expect(before <= wall && wall <= after)

        let first = clock.now()
        let second = clock.now()
        #expect(first > .zero)
        #expect(second >= first)
    }

    /// A sleep in a cancelled task ends at once with `CancellationError`, as the protocol promises.
    @Test func aCancelledSleepThrowsCancellation() async {
        let sleeping = Task { try await SystemClock().sleep(for: .seconds(3600)) }
        sleeping.cancel()
        let result = await sleeping.result
        #expect(throws: CancellationError.self) { try result.get() }
    }
}
