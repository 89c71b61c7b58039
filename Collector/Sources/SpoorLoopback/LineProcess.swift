package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process whose output is read line by line as it comes, so a caller can wait for a line (a server's
/// "ready", a drain's progress) instead of polling or sleeping. Used for `nats-server` and `spoor-collector drain`.
///
/// Unchecked: the lines are guarded by `condition`; the process handle is only read after `init`.
package final class LineProcess: @unchecked Sendable {
    /// The running process.
    package let process: Process
    private let condition = NSCondition()
    /// Every line read so far, and whether the output has ended. Guarded by `condition`.
    private var lines: [String] = []
    private var ended = false

    /// Starts `binary` with `arguments`, reading its standard output, or its standard error with `readingErrors`
    /// (the other goes to /dev/null).
    package init(_ binary: URL, _ arguments: [String], readingErrors: Bool = false) throws(LoopbackError) {
        process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let pipe = Pipe()
        if readingErrors {
            process.standardError = pipe
            process.standardOutput = FileHandle.nullDevice
        } else {
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
        }
        do {
            try process.run()
        } catch {
            throw LoopbackError("cannot start \(binary.path): \(error)")
        }
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                var complete: [String] = []
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    complete.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
                if !complete.isEmpty {
                    condition.withLock {
                        lines += complete
                        condition.broadcast()
                    }
                }
            }
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }
    }

    /// A process still running when its owner lets go (a test that failed on the way) is killed.
    deinit { stop(signal: SIGKILL) }

    /// The lines read so far.
    package var output: [String] { condition.withLock { lines } }

    /// Waits, at most `timeout`, for a line from index `start` on that satisfies `predicate`, and returns its index
    /// and text; throws when the output ends or the time runs out first. Blocks the calling thread: from a task,
    /// use ``line(from:timeout:where:)``.
    package func waitForLine(
        from start: Int = 0, timeout: Duration, where predicate: (String) -> Bool
    ) throws(LoopbackError) -> (index: Int, line: String) {
        let deadline = Date().addingTimeInterval(Self.seconds(timeout))
        condition.lock()
        defer { condition.unlock() }
        var next = start
        while true {
            while next < lines.count {
                if predicate(lines[next]) { return (next, lines[next]) }
                next += 1
            }
            if ended { throw LoopbackError("\(process.executableURL?.lastPathComponent ?? "the process") ended without the line awaited") }
            if !condition.wait(until: deadline) {
                throw LoopbackError("\(process.executableURL?.lastPathComponent ?? "the process") printed no such line within \(timeout)")
            }
        }
    }

    /// ``waitForLine(from:timeout:where:)`` on a thread of its own, for tasks.
    package func line(
        from start: Int = 0, timeout: Duration, where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> (index: Int, line: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { [self] in
                continuation.resume(with: Result { () throws(LoopbackError) in try waitForLine(from: start, timeout: timeout, where: predicate) })
            }
        }
    }

    /// Sends `signal` and waits for the process to exit.
    package func stop(signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    /// Waits, at most `timeout`, for the process to exit by itself (its output ends) and returns its exit status;
    /// throws when it is still running then.
    package func exitStatus(timeout: Duration) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { [self] in
                let deadline = Date().addingTimeInterval(Self.seconds(timeout))
                let done = condition.withLock {
                    while !ended, condition.wait(until: deadline) {}
                    return ended
                }
                guard done else {
                    continuation.resume(throwing: LoopbackError("\(process.executableURL?.lastPathComponent ?? "the process") still runs after \(timeout)"))
                    return
                }
                process.waitUntilExit()
                continuation.resume(returning: process.terminationStatus)
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
