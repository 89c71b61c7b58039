public import SpoorModel
public import SpoorWire
public import SpoorLog

/// Events that extend context records, as the tracker writes them: for each user a context record (ids, lib,
/// session, shared properties), then events with their own fields only. For the tests of the log's context
/// records and of batch splitting.
public enum ContextRuns {
    /// A context: ids, lib, session and the shared properties, no event fields.
    public static func context(_ user: String, screen: String = "Home") -> Event {
        Event(
            name: "", type: .unrecognized(0), time: 0, trackID: 0, sequence: 0,
            distinctID: user, anonymousID: "anon-" + user,
            lib: LibInfo(lib: "iOS", libVersion: "0.1.0", method: .unspecified, appVersion: "2.4.1"),
            properties: ["$os": .string("iOS"), "$model": .string("iPhone15,2"), "$screen": .string(screen)],
            sessionID: "session-" + user)
    }

    /// An event's own fields; `reference` (`context = 1`) makes it extend the context before it.
    public static func own(_ sequence: Int) -> Event {
        Event(
            name: "Click", time: 1_700_000_000_000 + Int64(sequence), sequence: UInt64(sequence),
            distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .autoTrack),
            properties: ["n": .int(Int64(sequence))])
    }

    public static let reference: [UInt8] = {
        var suffix: [UInt8] = []
        ContextRecord.appendReference(timeOffset: 0, sequenceOffset: 0, to: &suffix)
        return suffix
    }()

    /// A buffer: for each (user, range), the user's context then its events.
    public static func buffer(_ runs: [(String, Range<Int>)], encoder: EventEncoder = EventEncoder()) throws -> RecordBuffer {
        var buffer = RecordBuffer()
        for (user, range) in runs {
            try buffer.appendContext(context(user), suffix: [], using: encoder)
            for sequence in range { try buffer.append(own(sequence), suffix: reference, using: encoder) }
        }
        return buffer
    }
}
