public import Foundation
import SpoorSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process that a test awaits without holding a cooperative thread: threads of its own read its output
/// (line by line, as it arrives) and feed its input, and Foundation's termination handler reports its end.
///
/// Every wait has a bound (``bound``, five minutes unless given: a loaded machine still passes, and a passing test
/// never waits it out), and a child still running at the bound is killed: a child that hangs makes the test fail,
/// never hang. Used by Spoor's own tests (crash children, the `spoor` command, the example server) and offered to
/// tests of code that embeds Spoor.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is configured before it runs and then only read (its pid) or signalled; the rest
    // is under `state`.

    /// How the child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It returned or called `exit` with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The status a shell reports: the exit status, or 128 + the signal's number.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): "exit \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    private struct State {
        var output = Data()
        var lines: [String] = []
        var consumed = 0
        var outputEnded = false
        var errors = Data()
        var errorsEnded = false
        var termination: Termination?
    }

    private let process = Process()
    private let state = Locked(State())
    private let watchers = ConditionWatchers()
    /// How long any wait here lasts at most; a child still running then is killed.
    public let bound: Duration

    /// Writing to a child that has already exited raises SIGPIPE, whose default action ends the whole test
    /// process without a word; ignored once, a write fails with EPIPE instead.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable` with `arguments` and `environment` (this process's when nil), feeding it `input` (then
    /// end of file); without input its standard input is empty.
    public init(
        _ executable: URL, _ arguments: [String] = [], input: Data? = nil, environment: [String: String]? = nil,
        bound: Duration = .seconds(300)
    ) throws {
        _ = Self.ignoreBrokenPipes
        self.bound = bound
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        process.terminationHandler = { [state, watchers] process in
            let termination: Termination = process.terminationReason == .exit
                ? .exited(process.terminationStatus) : .signalled(process.terminationStatus)
            state.withLock { $0.termination = termination }
            watchers.check()
        }
        try process.run()
        Thread.detachNewThread { [state, watchers] in
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                state.withLock { s in
                    if chunk.isEmpty {
                        if !pending.isEmpty { s.lines.append(String(decoding: pending, as: UTF8.self)) }
                        s.outputEnded = true
                        return
                    }
                    s.output.append(chunk)
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        s.lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                        pending.removeSubrange(pending.startIndex...newline)
                    }
                }
                watchers.check()
                if chunk.isEmpty { return }
            }
        }
        Thread.detachNewThread { [state, watchers] in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            state.withLock { s in
                s.errors = data
                s.errorsEnded = true
            }
            watchers.check()
        }
        if let input {
            Thread.detachNewThread {
                // A child that exits without reading makes the write fail, and that is fine.
                try? stdin.fileHandleForWriting.write(contentsOf: input)
                try? stdin.fileHandleForWriting.close()
            }
        }
        // The bound: a child still running then is killed, so every wait below ends.
        let pid = process.processIdentifier
        Task { [state, watchers, bound] in
            _ = await watchers.wait(timeout: bound) { state.withLock { $0.termination != nil } }
            if state.withLock({ $0.termination == nil }) { Self.send(SIGKILL, to: pid) }
        }
    }

    /// Runs `executable` to its end and returns how it ended and everything it wrote.
    public static func run(
        _ executable: URL, _ arguments: [String] = [], input: Data? = nil, environment: [String: String]? = nil
    ) async throws -> (termination: Termination?, output: Data, errors: String) {
        let child = try ChildProcess(executable, arguments, input: input, environment: environment)
        let termination = await child.termination()
        return (termination, await child.output(), await child.standardError())
    }

    /// The child's process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal` (default SIGKILL).
    public func kill(_ signal: Int32 = SIGKILL) {
        Self.send(signal, to: process.processIdentifier)
    }

    private static func send(_ signal: Int32, to pid: Int32) {
        #if canImport(Glibc)
        _ = Glibc.kill(pid, signal)
        #else
        _ = Darwin.kill(pid, signal)
        #endif
    }

    /// Sends `signal` and returns how the child ended.
    public func stop(with signal: Int32) async -> Termination? {
        kill(signal)
        return await termination()
    }

    /// How the child ended, once it has; nil if it had not within the bound (it is killed then).
    public func termination() async -> Termination? {
        _ = await watchers.wait(timeout: bound) { [state] in state.withLock { $0.termination != nil } }
        return state.withLock { $0.termination }
    }

    /// The next line of standard output not yet returned by this method, or nil at its end.
    public func nextLine() async -> String? {
        _ = await watchers.wait(timeout: bound) { [state] in state.withLock { $0.lines.count > $0.consumed || $0.outputEnded } }
        return state.withLock { s -> String? in
            guard s.lines.count > s.consumed else { return nil }
            s.consumed += 1
            return s.lines[s.consumed - 1]
        }
    }

    /// The lines of standard output once `done` holds for them, or all of them when the output ended first.
    @discardableResult
    public func lines(until done: @escaping @Sendable ([String]) -> Bool = { _ in false }) async -> [String] {
        _ = await watchers.wait(timeout: bound) { [state] in state.withLock { $0.outputEnded || done($0.lines) } }
        return state.withLock { $0.lines }
    }

    /// Everything written to standard output, once it ended.
    public func output() async -> Data {
        _ = await watchers.wait(timeout: bound) { [state] in state.withLock { $0.outputEnded } }
        return state.withLock { $0.output }
    }

    /// Everything written to standard error, once it ended.
    public func standardError() async -> String {
        _ = await watchers.wait(timeout: bound) { [state] in state.withLock { $0.errorsEnded } }
        return String(decoding: state.withLock { $0.errors }, as: UTF8.self)
    }
}
