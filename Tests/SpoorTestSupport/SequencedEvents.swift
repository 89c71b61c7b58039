public import SpoorModel
public import SpoorWire
public import SpoorLog
public import Testing
import SpoorSystem

/// Events that carry their sequence number, for the tests of the log, the wire and the uploader: a test reads back
/// what a record, a frame or a batch held by its numbers. The event is a typical product view with a dozen preset
/// and custom properties, so sizes are realistic.
public enum SequencedEvents {
    /// Event number `sequence`.
    public static func event(_ sequence: Int) -> Event {
        Event(
            name: "ViewProduct",
            time: 1_700_000_000_000 + Int64(sequence),
            trackID: UInt64(sequence) &* 0x9E37_79B9_7F4A_7C15,
            sequence: UInt64(sequence),
            distinctID: "user-\(sequence % 7)",
            anonymousID: "5F2C9A1E-0B7D-4C3A-9E61-2D8F4B7A1C30",
            lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.4.1"),
            properties: [
                "product_id": .string("sku-\(sequence % 1000)"),
                "price": .double(19.99),
                "quantity": .int(Int64(sequence % 5 + 1)),
                "in_stock": .bool(true),
                "tags": .list(["sale", "summer"]),
                "$screen_name": .string("ProductDetailViewController"),
                "$os": .string("Linux"),
                "$os_version": .string("6.8"),
                "$model": .string("x86_64"),
                "$network_type": .string("WIFI"),
            ],
            sessionID: "session-\(sequence / 100)"
        )
    }

    /// A buffer of events `range`, encoded. An event that does not encode is a test failure (never a crash of the
    /// whole test process) and is left out.
    public static func buffer(_ range: Range<Int>, encoder: EventEncoder = EventEncoder()) -> RecordBuffer {
        var buffer = RecordBuffer()
        for sequence in range {
            do {
                try buffer.append(event(sequence), using: encoder)
            } catch {
                Issue.record("event \(sequence) does not encode: \(error)")
            }
        }
        return buffer
    }

    /// The sequence numbers of every live record of `log`, in order. A record that does not decode is a test
    /// failure (never a crash of the whole test process) and adds nothing.
    public static func sequences(_ log: EventLog) -> [Int] {
        let decoder = EventDecoder()
        var out: [Int] = []
        log.forEachRecord { payload in
            do {
                for event in try decoder.decodeBatch(payload) { out.append(Int(event.sequence)) }
            } catch {
                Issue.record("a record does not decode: \(error)")
            }
        }
        return out
    }

    /// Appends events `0 ..< writers × 3,000` to `log` from `writers` threads at once (twenty an append, writer
    /// `w` its own 3,000 from `w × 3,000`), while each of `others` (sealers, readers) runs on a thread of its own
    /// beside them: blocking file I/O, so off the cooperative pool. Returns what `others` returned, joined: the
    /// log tests' stress of appends racing seals and reads.
    public static func appendConcurrently(
        to log: EventLog, writers: Int, alongside others: [@Sendable () -> [Int]]
    ) async -> [Int] {
        await onThreadsOfTheirOwn(writers + others.count) { index -> [Int] in
            guard index < writers else { return others[index - writers]() }
            let encoder = EventEncoder()
            for start in stride(from: index * 3000, to: index * 3000 + 3000, by: 20) {
                log.append(buffer(start..<start + 20, encoder: encoder))
            }
            return []
        }.flatMap { $0 }
    }

    /// The sequence numbers in a batch payload.
    public static func sequences(inBatch payload: [UInt8]) throws -> [Int] {
        try EventDecoder().decodeBatch(payload).map { Int($0.sequence) }
    }
}

extension Codec {
    /// The compressing codecs this build links: gzip always, zstd with the `SystemLibraries` trait.
    public static let linkedCompressors: [Codec] = [.gzip] + (Codec.zstd.isAvailable ? [.zstd] : [])
    /// Every codec this build can write.
    public static let linked: [Codec] = Codec.allCases.filter(\.isAvailable)
}

/// For a test about zstd itself: it runs where zstd is linked, and says why not elsewhere.
public let zstdLinked = Testing.ConditionTrait.enabled(if: Codec.zstd.isAvailable, "zstd is linked only with the SystemLibraries trait")
