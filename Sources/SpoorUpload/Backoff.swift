import Foundation
import SpoorSystem

/// Exponential backoff with full jitter: the n-th consecutive failure waits a uniformly random time in
/// `0 ... min(cap, base × 2ⁿ⁻¹)` (1 s base and a 5 min cap by default).
///
/// Full jitter spreads the retries of many clients that failed together, so a collector coming back is not
/// hit by all of them at once.
public struct Backoff: Sendable, Hashable {
    /// The ceiling of the first retry's delay (default 1 s).
    public var base: Duration
    /// The largest ceiling (default 5 minutes).
    public var cap: Duration

    /// Creates a policy.
    public init(base: Duration = .seconds(1), cap: Duration = .seconds(300)) {
        self.base = base
        self.cap = cap
    }

    /// The ceiling for the `failures`-th consecutive failure (1 for the first): `min(cap, base × 2^(failures-1))`.
    public func ceiling(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        let baseNanos = base.nanoseconds
        let capNanos = cap.nanoseconds
        let shift = min(failures - 1, 62)
        let (scaled, overflow) = baseNanos.multipliedReportingOverflow(by: Int64(1) << shift)
        return .nanoseconds(overflow || scaled > capNanos ? capNanos : scaled)
    }

    /// The delay before the next attempt after `failures` consecutive failures, drawn from `random`.
    public func delay(afterFailures failures: Int, using random: inout some RandomNumberGenerator) -> Duration {
        let ceiling = ceiling(afterFailures: failures).nanoseconds
        guard ceiling > 0 else { return .zero }
        // One draw scaled onto 0...ceiling (multiply-high, no rejection loop): a generator that always gives the
        // same word still gives an answer, and the all-ones word gives the ceiling itself.
        let scaled = random.next().multipliedFullWidth(by: UInt64(ceiling) + 1).high
        return .nanoseconds(Int64(scaled))
    }
}

/// The `Retry-After` header (RFC 9110 §10.2.3): a number of seconds or an HTTP date.
package enum RetryAfter {
    /// The longest pause a server may ask for (1 h); longer asks are cut to it.
    package static let maximum: Duration = .seconds(3600)

    /// The pause `value` asks for, counted from `nowMilliseconds` (wall clock, for the date form), at most
    /// ``maximum``; a date in the past gives zero. Nil when `value` is neither form.
    package static func parse(_ value: String, nowMilliseconds: Int64) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            // Delay-seconds: digits only; a huge number is the maximum, not an overflow.
            guard let seconds = Int64(text) else { return maximum }
            return min(.seconds(seconds), maximum)
        }
        guard let date = httpDate(text) else { return nil }
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) - nowMilliseconds
        return min(.milliseconds(max(0, milliseconds)), maximum)
    }

    /// Parses the three date forms HTTP allows: IMF-fixdate, RFC 850 and asctime.
    static func httpDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
