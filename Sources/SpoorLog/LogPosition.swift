/// A position in the log: a segment and a byte offset in it.
package struct LogPosition: Comparable, Hashable, Sendable {
    package var segment: UInt64
    package var offset: Int

    package init(segment: UInt64, offset: Int) {
        self.segment = segment
        self.offset = offset
    }

    package static func < (a: Self, b: Self) -> Bool {
        (a.segment, a.offset) < (b.segment, b.offset)
    }
}
