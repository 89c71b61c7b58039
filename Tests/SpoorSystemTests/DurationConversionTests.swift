import SpoorSystem
import Testing

@Suite("Duration in milliseconds, nanoseconds and seconds")
struct DurationConversionTests {
    @Test("whole units, rounded toward zero")
    func roundedTowardZero() {
        #expect(Duration.seconds(2).milliseconds == 2000)
        #expect(Duration.nanoseconds(1_999_999).milliseconds == 1)
        #expect(Duration.nanoseconds(-1_999_999).milliseconds == -1)
        #expect(Duration.milliseconds(1500).nanoseconds == 1_500_000_000)
        #expect(Duration.microseconds(-7).nanoseconds == -7000)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999).nanoseconds == 0)
    }

    @Test("saturates at the bounds of Int64 instead of trapping")
    func saturates() {
        #expect(Duration.seconds(Int64.max).milliseconds == .max)
        #expect(Duration.seconds(Int64.min).milliseconds == .min)
        #expect(Duration.seconds(Int64.max / 1000).milliseconds == Int64.max / 1000 * 1000)
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect(Duration.seconds(-10_000_000_000).nanoseconds == .min)
        #expect(Duration.seconds(9_223_372_036).nanoseconds == 9_223_372_036_000_000_000)
    }

    @Test("seconds as a TimeInterval")
    func timeInterval() {
        #expect(Duration.milliseconds(1500).timeInterval == 1.5)
        #expect(Duration.milliseconds(-250).timeInterval == -0.25)
        #expect(Duration.zero.timeInterval == 0)
        #expect(Duration.seconds(Int64.max).timeInterval == 9.223372036854776e18)
        // Under about three months, within a nanosecond of the exact value.
        let ninetyDays = Duration.seconds(90 * 86_400) + .nanoseconds(123_456_789)
        #expect(abs(ninetyDays.timeInterval - 7_776_000.123456789) < 1e-9)
    }
}
