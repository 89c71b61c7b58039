/// A `Duration` in the units older APIs take: whole milliseconds (a timer, a poll), whole nanoseconds (a dispatch
/// time, a histogram, a socket option) and seconds as a `Double` (Foundation's `TimeInterval`). Every Spoor
/// package converts with these, so a duration is converted one way everywhere.
extension Duration {
    /// The duration in whole milliseconds, rounded toward zero; saturates at the bounds of `Int64` rather than
    /// trapping.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !overflowAgain else { return attoseconds < 0 ? .min : .max }
        return total
    }

    /// The duration in whole nanoseconds, rounded toward zero; saturates at the bounds of `Int64` (about 292
    /// years either way) rather than trapping.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflowAgain else { return attoseconds < 0 ? .min : .max }
        return total
    }

    /// The duration in seconds, as Foundation's `TimeInterval` counts it, rounded to the nearest `Double`: less
    /// than a nanosecond off for anything under about three months, and never trapping (every `Duration` is
    /// within a `Double`'s range).
    public var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
