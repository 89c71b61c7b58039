extension Duration {
    /// The duration in whole milliseconds, rounded toward zero.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds, rounded toward zero; saturates at the bounds of `Int64`.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflowAgain else { return attoseconds < 0 ? .min : .max }
        return total
    }
}
