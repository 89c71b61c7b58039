#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SpoorSystem
import SpoorTesting

/// How long a test waits for something bound to happen before it calls it a failure: minutes, so that a loaded
/// machine still passes and a regression that hangs still fails. A passing test never waits it out.
let testBound: Duration = .seconds(300)

/// A process whose standard output is read line by line as it arrives, so that a test awaits a condition on
/// the lines seen so far, or the process's end, instead of sleeping.
///
/// Nothing here holds a cooperative thread: threads of its own read the output and feed the input, and
/// Foundation's termination handler reports the end. Every wait has the bound ``testBound``, and a process
/// still running at the bound is killed, so a test whose process hangs fails instead of hanging.
final class FollowedProcess: @unchecked Sendable {
    // @unchecked: `process` is configured before it runs and then only signalled; `state` is under its lock.
    private struct State {
        var output = Data()
        var lines: [String] = []
        var outputEnded = false
        var errors = Data()
        var errorsEnded = false
        /// The exit status, or 128 + the signal that ended the process.
        var status: Int32?
    }

    private let process = Process()
    /// What the process did so far; `ConditionWatchers` conditions read it.
    private let state = Locked(State())
    private let watchers = ConditionWatchers()

    /// Writing to a child that has already exited raises SIGPIPE, whose default action ends this whole test
    /// process without a word (seen as a silent `swift test` exit 1). Ignored once: the write fails with EPIPE.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable` (the built `spoor` unless given) with `arguments` and this process's environment
    /// changed by `environment`, feeding it `input` and then end of file (no input: an empty standard input).
    init(
        _ arguments: [String], executable: URL = SpoorProcess.executable, input: Data? = nil, environment: [String: String] = [:]
    ) throws {
        _ = Self.ignoreBrokenPipes
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe(), errorPipe = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errorPipe
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        process.terminationHandler = { [state, watchers] process in
            let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
            state.withLock { $0.status = status }
            watchers.check()
        }
        try process.run()
        Thread.detachNewThread { [state, watchers] in
            var pending = Data()
            var ended = false
            while !ended {
                let chunk = output.fileHandleForReading.availableData
                ended = chunk.isEmpty
                state.withLock { s in
                    s.output.append(chunk)
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        s.lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                        pending.removeSubrange(pending.startIndex...newline)
                    }
                    if ended {
                        if !pending.isEmpty { s.lines.append(String(decoding: pending, as: UTF8.self)) }
                        s.outputEnded = true
                    }
                }
                watchers.check()
            }
        }
        Thread.detachNewThread { [state, watchers] in
            let data = errorPipe.fileHandleForReading.readDataToEndOfFile()
            state.withLock { s in
                s.errors = data
                s.errorsEnded = true
            }
            watchers.check()
        }
        if let input {
            Thread.detachNewThread {
                // A child that refuses its arguments exits without reading: the write then fails, and that is fine.
                try? stdin.fileHandleForWriting.write(contentsOf: input)
                try? stdin.fileHandleForWriting.close()
            }
        }
        let pid = process.processIdentifier
        Task { [state, watchers] in
            _ = await watchers.wait(timeout: testBound) { state.withLock { $0.status != nil } }
            if state.withLock({ $0.status == nil }) { kill(pid, SIGKILL) }
        }
    }

    /// The lines once `done(lines)` holds, or all of them when the output ended first (or at the bound).
    @discardableResult
    func lines(until done: @escaping @Sendable ([String]) -> Bool = { _ in false }) async -> [String] {
        _ = await watchers.wait(timeout: testBound) { [state] in state.withLock { $0.outputEnded || done($0.lines) } }
        return state.withLock { $0.lines }
    }

    /// Sends `signal` and waits for the process to end: its status (128 + the signal if one ended it), or nil
    /// if it did not end within the bound.
    func stop(with signal: Int32) async -> Int32? {
        kill(process.processIdentifier, signal)
        return await exitStatus()
    }

    /// Waits for the process to end: its status (128 + the signal if one ended it), or nil if it did not end
    /// within the bound (it is killed then).
    func exitStatus() async -> Int32? {
        _ = await watchers.wait(timeout: testBound) { [state] in state.withLock { $0.status != nil } }
        return state.withLock { $0.status }
    }

    /// Everything written to standard output, once it ended.
    func output() async -> Data {
        _ = await watchers.wait(timeout: testBound) { [state] in state.withLock { $0.outputEnded } }
        return state.withLock { $0.output }
    }

    /// Everything written to standard error, once it ended.
    func standardError() async -> String {
        _ = await watchers.wait(timeout: testBound) { [state] in state.withLock { $0.errorsEnded } }
        return String(decoding: state.withLock { $0.errors }, as: UTF8.self)
    }
}
