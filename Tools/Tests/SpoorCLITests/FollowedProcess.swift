#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpoorWire

/// A `spoor` process whose standard output is read line by line as it arrives, so a test can wait for a
/// condition on the lines seen so far, with a deadline, instead of sleeping.
final class FollowedProcess: @unchecked Sendable {
    // @unchecked: `lines`, `ended` and `errors` are guarded by `condition`.
    let process = Process()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var errors = Data()
    private var ended = false
    private let exited = DispatchSemaphore(value: 0)

    init(_ arguments: [String], executable: URL = SpoorProcess.executable) throws {
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe(), errorPipe = Pipe()
        process.standardOutput = output
        process.standardError = errorPipe
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                condition.lock()
                if chunk.isEmpty {
                    ended = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
                condition.broadcast()
                condition.unlock()
            }
        }
        Thread.detachNewThread { [self] in
            let data = errorPipe.fileHandleForReading.readDataToEndOfFile()
            condition.lock()
            errors = data
            condition.unlock()
        }
    }

    /// The lines once `done(lines)` holds, or whatever was seen when the deadline passed or the output ended.
    @discardableResult
    func waitForLines(seconds: Double = 20, until done: ([String]) -> Bool) -> [String] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !done(lines), !ended, condition.wait(until: deadline) {}
        return lines
    }

    /// Sends `signal` and waits for the process to end; its status, or nil if it did not end in time.
    func stop(with signal: Int32, seconds: Double = 20) -> Int32? {
        kill(process.processIdentifier, signal)
        return waitForExit(seconds: seconds)
    }

    /// Waits for the process to end by itself; its status (128 + the signal if one ended it), or nil if it
    /// did not end in time (it is then killed).
    func waitForExit(seconds: Double = 20) -> Int32? {
        guard exited.wait(timeout: .now() + seconds) == .success else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    var standardError: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: errors, as: UTF8.self)
    }
}
