import Foundation
import SpoorWire
import Testing

/// `spoor decode` and `spoor encode` carry an event type and lib method this schema does not
/// know (a newer SDK's) through JSON as numbers, and back to the same bytes.
@Suite("spoor decode and encode with unknown enum values")
struct OpenEnumCommandTests {
    /// A one-event Batch with type 99 and method 7, built byte by byte as Google's runtime writes it.
    static let batch: [UInt8] = {
        let event: [UInt8] = [0x0A, 0x01, 0x46, 0x10, 0x63, 0x18, 0x01, 0x32, 0x01, 0x75, 0x3A, 0x01, 0x61,
                              0x4A, 0x08, 0x0A, 0x01, 0x4C, 0x12, 0x01, 0x31, 0x18, 0x07]
        return [0x0A, UInt8(event.count)] + event
    }()

    @Test func decodeThenEncodeKeepsTheBytes() async throws {
        let decoded = try await SpoorProcess.run(["decode"], input: Data(Self.batch))
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdoutText.contains(#""type":99,"#), "\(decoded.stdoutText)")
        #expect(decoded.stdoutText.contains(#""$lib_method":7,"#), "\(decoded.stdoutText)")
        let encoded = try await SpoorProcess.run(["encode"], input: decoded.stdout)
        #expect(encoded.status == 0, "\(encoded.stderr)")
        #expect([UInt8](encoded.stdout) == Self.batch)
    }
}
