import SpoorCollectorCore
import SpoorCollectorSQLite
import SpoorCollectorTestSupport
import SpoorWire
import Testing

@Suite("The request core's answers to bad frames", .timeLimit(.minutes(10)))
struct FrameAnswerTests {
    /// A frame after `edit`, with the header checksum made right again when `reseal`.
    static func frame(reseal: Bool = false, _ edit: (inout [UInt8]) -> Void) throws -> [UInt8] {
        var frame = try Frames.frame(Frames.events(3), codec: .none)
        edit(&frame)
        if reseal {
            let crc = CRC32C.checksum(Array(frame[0..<48]))
            withUnsafeBytes(of: crc.littleEndian) { frame.replaceSubrange(48..<52, with: $0) }
        }
        return frame
    }

    @Test("each bad part of a frame is named with the byte it starts at, as the frame layout places it")
    func fieldAndByte() async throws {
        let ingest = Ingest(store: try SQLiteStore(path: nil))
        let cases: [(body: [UInt8], status: Int, reason: String, detail: String)] = [
            (try Self.frame { $0[0] = 0 }, 400, "badMagic", "magic at byte 0: "),
            (try Self.frame { $0[4] = 2 }, 415, "unsupportedVersion", "version at byte 4: "),
            (try Self.frame { $0[5] = 9 }, 415, "unknownCodec", "codec at byte 5: "),
            (try Self.frame { $0[6] = 53 }, 400, "badHeaderLength", "header_length at byte 6: "),
            (try Self.frame(reseal: true) { $0[8] = 4 }, 400, "malformedPayload", "record_count at byte 8: "),
            (try Self.frame { $0[30] ^= 1 }, 400, "headerChecksumMismatch", "header_crc at byte 48: "),
            (try Self.frame { $0[$0.count - 1] ^= 1 }, 400, "payloadChecksumMismatch", "payload_crc at byte 52: "),
            (try Self.frame { $0.removeLast() }, 400, "truncated", "payload at byte 52: "),
            (try Self.frame { $0.removeSubrange(10...) }, 400, "truncated", "header: "),
        ]
        for (body, status, reason, detail) in cases {
            let answer = await ingest.handle(body, receivedAt: 0)
            #expect(answer.status == status, "\(answer.body)")
            #expect(answer.body.hasPrefix(#"{"error":"\#(reason)","detail":"\#(detail)"#), "\(answer.body)")
        }
    }
}
