import Foundation
import Logging
import SpoorModel
import SpoorWire
import SpoorTestSupport
import Testing
import SpoorLog

/// The log tests' events: each carries its sequence number.
typealias Fixtures = SequencedEvents

func open(_ directory: TemporaryDirectory, _ configuration: EventLog.Configuration = .init(), logger: Logger? = nil) throws -> EventLog {
    try EventLog(directory: directory.url, configuration: configuration, logger: logger ?? Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
}


/// Appends the fixture events numbered `range` to `log`, in one write group.
func append(_ range: Range<Int>, to log: EventLog) throws {
    var buffer = RecordBuffer()
    for sequence in range { try buffer.append(Fixtures.event(sequence), using: EventEncoder()) }
    log.append(buffer)
}

/// How often each sequence number is stored in the storage directory `storage`, batches and live records of every
/// log together.
func stored(_ storage: URL) throws -> [UInt64: Int] {
    var seen: [UInt64: Int] = [:]
    for event in try StoredLogs.events(in: storage) { seen[event.sequence, default: 0] += 1 }
    return seen
}

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
