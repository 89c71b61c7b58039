/// A position in the log: a segment and a byte offset in it.
struct LogPosition: Comparable, Hashable, Sendable {
    var segment: UInt64
    var offset: Int

    static func < (a: Self, b: Self) -> Bool {
        (a.segment, a.offset) < (b.segment, b.offset)
    }
}
