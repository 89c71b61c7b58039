package import SpoorModel
/// Formats and parses `yyyy-MM-ddTHH:mm:ss.SSSZ`, the one date form Spoor's JSON uses.
///
/// Written out by hand (days-from-civil arithmetic) because it runs per
/// property on the `spoor decode` path, and `DateFormatter` is slow and
/// depends on locale settings.
package enum ISO8601Millis {
    /// The ISO-8601 text of `millis`, or `nil` for years outside 0000–9999.
    package static func format(_ millis: EpochMilliseconds) -> String? {
        let (days, msOfDay) = floorDivide(millis, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        guard (0...9999).contains(year) else { return nil }
        let ms = Int(msOfDay)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(ms / 3_600_000, 2) + ":" + pad(ms / 60_000 % 60, 2) + ":" + pad(ms / 1000 % 60, 2)
            + "." + pad(ms % 1000, 3) + "Z"
    }

    /// The epoch milliseconds of an exact `yyyy-MM-ddTHH:mm:ss.SSSZ` text, or `nil` for anything else.
    package static func parse(_ text: String) -> EpochMilliseconds? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 24 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = utf8[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let separators: [(Int, UInt8)] = [(4, 0x2D), (7, 0x2D), (10, 0x54), (13, 0x3A), (16, 0x3A), (19, 0x2E), (23, 0x5A)]
        for (index, byte) in separators where utf8[index] != byte { return nil }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              let ms = number(20..<23),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        let days = Int64(days(fromCivil: year, month, day))
        return days * 86_400_000 + Int64(hour * 3_600_000 + minute * 60_000 + second * 1000 + ms)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let (q, r) = a.quotientAndRemainder(dividingBy: b)
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        // Out-of-range inputs are clamped so the arithmetic cannot overflow; they are rejected by the caller.
        let z = Int(max(min(days, 1 << 40), -(1 << 40))) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
