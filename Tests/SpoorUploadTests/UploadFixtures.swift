import SpoorModel
import SpoorWire
import SpoorLog
import Testing

/// Events for the upload tests: each carries its sequence number, so a test reads back what a batch held.
enum UploadFixtures {
    static func event(_ sequence: Int) -> Event {
        Event(
            name: "ViewProduct", time: 1_700_000_000_000 + Int64(sequence), trackID: UInt64(sequence) &* 0x9E37_79B9_7F4A_7C15,
            sequence: UInt64(sequence), distinctID: "user-\(sequence % 7)", anonymousID: "5F2C9A1E-0B7D-4C3A-9E61-2D8F4B7A1C30",
            lib: LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.4.1"),
            properties: ["product_id": .string("sku-\(sequence % 1000)"), "price": .double(19.99)],
            sessionID: "session-\(sequence / 100)")
    }

    /// A buffer of events `range`, encoded; an event that does not encode is a test failure and is left out.
    static func buffer(_ range: Range<Int>) -> RecordBuffer {
        var buffer = RecordBuffer()
        let encoder = EventEncoder()
        for sequence in range {
            do {
                try buffer.append(event(sequence), using: encoder)
            } catch {
                Issue.record("event \(sequence) does not encode: \(error)")
            }
        }
        return buffer
    }

    /// The sequence numbers in a batch payload.
    static func sequences(inBatch payload: [UInt8]) throws -> [Int] {
        try EventDecoder().decodeBatch(payload).map { Int($0.sequence) }
    }
}
