import SpoorSystem
import Testing

@Suite struct DurationUnitsTests {
    @Test func wholeUnitsRoundTowardZero() {
        #expect(Duration.microseconds(1_999).milliseconds == 1)
        #expect(Duration.microseconds(-1_999).milliseconds == -1)
        #expect(Duration.nanoseconds(1_500).nanoseconds == 1_500)
        #expect((Duration.seconds(2) + .nanoseconds(7)).nanoseconds == 2_000_000_007)
        #expect(Duration.zero.milliseconds == 0)
    }

    @Test func nanosecondsSaturateInsteadOfOverflowing() {
        #expect(Duration.seconds(Int64.max / 2).nanoseconds == .max)
        #expect(Duration.seconds(Int64.min / 2).nanoseconds == .min)
        #expect(Duration.seconds(9_223_372_036).nanoseconds == 9_223_372_036_000_000_000)
    }
}
