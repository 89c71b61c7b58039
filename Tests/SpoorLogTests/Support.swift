import Foundation
import Logging
import SpoorModel
import SpoorWire
import SpoorTestSupport
import Testing
import SpoorLog

/// A clock tests move by hand.
enum Fixtures {
    /// The reference event: a typical product view with a dozen preset and custom properties.
    static func event(_ sequence: Int) -> Event {
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
    static func buffer(_ range: Range<Int>, encoder: EventEncoder = EventEncoder()) -> RecordBuffer {
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

    /// The sequence numbers of every live record, in order. A record that does not decode is a test failure
    /// (never a crash of the whole test process) and adds nothing.
    static func sequences(_ log: EventLog) -> [Int] {
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

    /// The sequence numbers in a batch payload.
    static func sequences(inBatch payload: [UInt8]) throws -> [Int] {
        try EventDecoder().decodeBatch(payload).map { Int($0.sequence) }
    }
}

func open(_ directory: TemporaryDirectory, _ configuration: EventLog.Configuration = .init(), logger: Logger? = nil) throws -> EventLog {
    try EventLog(directory: directory.url, configuration: configuration, logger: logger ?? Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
}

extension Codec {
    /// The compressing codecs this build links: gzip everywhere, zstd with the `SystemLibraries` trait (Linux).
    /// `SpoorWireTests.CodecAvailabilityTests` fails on Linux if zstd ever goes missing, so no zstd case is
    /// dropped there unseen.
    static let linkedCompressors: [Codec] = [.gzip] + (Codec.zstd.isAvailable ? [.zstd] : [])

    /// Every codec this build can write and read: all of them on Linux, none and gzip on Apple platforms.
    static let linked: [Codec] = Codec.allCases.filter(\.isAvailable)
}

/// Tests about zstd itself run where it is linked; elsewhere (Apple platforms) Swift Testing reports them skipped.
let zstdLinked = Testing.ConditionTrait.enabled(if: Codec.zstd.isAvailable, "zstd is linked only with the SystemLibraries trait")

/// The repository root, found from this file's path.
let repositoryRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// An executable built next to the test bundle.
func builtExecutable(_ name: String) -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if directory.path.hasSuffix(".xctest/Contents/MacOS") {
        directory = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

extension FileHandle {
    static func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }
}

func writeBytes(_ bytes: [UInt8], to path: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}
