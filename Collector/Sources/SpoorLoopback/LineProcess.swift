package import Foundation
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process whose standard output and standard error are read line by line as they come, so a caller awaits
/// a line (a server's "listening on", a drain's progress, a child's count of durable events) or the process's exit
/// instead of polling or sleeping. Used for `spoor-collector` (serve and drain), `nats-server` and the tests' child.
///
/// Nothing here blocks a task: a thread of its own reads each stream, another waits for the exit (`waitpid`), and
/// every wait is a continuation answered by them, or by a timer once its bound has passed (a hang then fails
/// instead of stalling the caller), or by the caller's cancellation. `posix_spawn` rather than Foundation's
/// `Process`, whose exit was seen to go unreported (the child left a zombie) when many children ended at once.
package final class LineProcess: Sendable {
    /// One of the child's output streams.
    package enum Stream: Sendable {
        case output, errors
    }

    /// The process id.
    package let pid: pid_t
    private let shared: Shared
    /// The write end of the child's standard input, while open (-1 without `input`, or once closed).
    private let input: Locked<Int32>

    /// The most lines kept per stream: a chatty child's oldest lines are dropped (their indices stay counted).
    package static let keptLines = 100_000

    /// Starts `binary` with `arguments`, reading both of its output streams. With `input`, its standard input is a
    /// pipe the caller ends with ``closeInput()`` (a signal the child can wait for); else it reads nothing.
    /// `onLine`, when given, sees each line as it is read, on the reading thread: for what must follow a line at
    /// once, whether or not the caller's tasks get a thread soon. The child inherits no other descriptor.
    /// `environment` replaces the process's environment when given; with `errorLog`, what it writes to standard
    /// error is also appended to that file (created when missing), as it is read.
    package init(_ binary: URL, _ arguments: [String], input: Bool = false, environment: [String: String]? = nil,
                 errorLog: URL? = nil, onLine: (@Sendable (Stream, String) -> Void)? = nil) throws(LoopbackError) {
        var logFile: FileHandle?
        if let errorLog {
            if !FileManager.default.fileExists(atPath: errorLog.path) {
                _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
            }
            guard let file = FileHandle(forWritingAtPath: errorLog.path) else {
                throw LoopbackError("cannot write \(errorLog.path)")
            }
            file.seekToEndOfFile()
            logFile = file
        }
        let name = binary.lastPathComponent
        let output = try Spawning.pipe()
        let errors = try Spawning.pipe()
        let stdin = input ? try Spawning.pipe() : nil
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        Spawning.closeInherited(&actions)
        let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        let spawned = envp.map { posix_spawn(&child, binary.path, &actions, nil, argv, $0) }
            ?? posix_spawn(&child, binary.path, &actions, nil, argv, environ)
        let pid = child
        // The child holds its own copies now; ours must close, or the readers would never see the end.
        for fd in [output.write, errors.write, stdin?.read].compactMap({ $0 }) { close(fd) }
        guard spawned == 0 else {
            for fd in [output.read, errors.read, stdin?.write].compactMap({ $0 }) { close(fd) }
            try? logFile?.close()
            throw LoopbackError("cannot start \(binary.path): error \(spawned)")
        }
        self.pid = pid
        self.input = Locked(stdin?.write ?? -1)
        let shared = Shared(name: name)
        self.shared = shared
        for (stream, fd) in [(Stream.output, output.read), (.errors, errors.read)] {
            let copy = stream == .errors ? logFile : nil
            let thread = Thread { Self.read(fd, stream, into: shared, copyingTo: copy, onLine: onLine) }
            thread.name = "\(name) \(stream)"
            thread.start()
        }
        let waiter = Thread {
            // Seen first without reaping (the pid stays the child's, so no signal can reach another process), then
            // reaped for its status.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
            shared.exiting()
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            // WIFEXITED, WEXITSTATUS and WTERMSIG, which Swift does not import.
            shared.exited(status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f)
        }
        waiter.name = "\(name) exit"
        waiter.start()
    }

    /// A process still running when its owner lets go (a test that failed on the way) is killed; nothing waits.
    deinit {
        signal(SIGKILL)
        closeInput()
    }

    /// The lines of standard output read so far (the newest ``keptLines``).
    package var output: [String] { shared.lines(.output) }

    /// The lines of standard error read so far (the newest ``keptLines``).
    package var errors: [String] { shared.lines(.errors) }

    /// How many lines of `stream` were read so far: the index the next one will have.
    package func lineCount(_ stream: Stream = .output) -> Int { shared.count(stream) }

    /// Waits, at most `timeout`, for a line of `stream` from index `start` on that satisfies `predicate`, and
    /// returns its index and text; throws when the stream ends or the time runs out first, or when cancelled.
    package func line(
        _ stream: Stream = .output, from start: Int = 0, timeout: Duration = waitBound,
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> (index: Int, line: String) {
        try await shared.wait("a line of its \(stream) as awaited", timeout: timeout) { state in
            let lines = state[stream]
            var index = max(start, lines.first)
            while index < lines.end {
                let line = lines.kept[index - lines.first]
                if predicate(line) { return .success((index, line)) }
                index += 1
            }
            return lines.ended ? .failure(LoopbackError("\(state.name) ended its \(stream) without the line awaited")) : nil
        }
    }

    /// Waits, at most `timeout`, until the process has exited and both its streams have ended (so every line it
    /// wrote has been read); returns its exit status (the signal's number when a signal ended it).
    package func exitStatus(timeout: Duration = waitBound) async throws -> Int32 {
        try await shared.wait("an exit", timeout: timeout) { state in
            guard let status = state.status, state.output.ended, state.errors.ended else { return nil }
            return .success(status)
        }
    }

    /// Sends `signal` (when the process still runs) and waits, at most `timeout`, for it to exit; returns its
    /// exit status as ``exitStatus(timeout:)`` does.
    @discardableResult
    package func stop(signal: Int32 = SIGTERM, timeout: Duration = waitBound) async throws -> Int32 {
        self.signal(signal)
        return try await exitStatus(timeout: timeout)
    }

    /// Sends `signal`, unless the process has exited, without waiting for anything.
    package func signal(_ signal: Int32) {
        shared.unlessExited { _ = kill(pid, signal) }
    }

    /// Whether the process has exited.
    package var hasExited: Bool { shared.hasExited }

    /// Writes `line` and a newline to the child's standard input (when it was started with `input` and it is still
    /// open); false when it could not.
    @discardableResult
    package func send(_ line: String) -> Bool {
        _ = Self.ignoreBrokenPipes
        return input.withLock { fd in
            guard fd >= 0 else { return false }
            let bytes = Array((line + "\n").utf8)
            var done = 0
            while done < bytes.count {
                let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return false }
                done += count
            }
            return true
        }
    }

    /// A write to a child that has exited fails instead of ending this process.
    private static let ignoreBrokenPipes: Void = {
        #if canImport(Glibc)
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
        #else
        _ = Darwin.signal(SIGPIPE, SIG_IGN)
        #endif
    }()

    /// Ends the child's standard input (when it was started with `input`).
    package func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Reads `fd` to its end, line by line, into `shared` (and each chunk to `copy` as well when given), and
    /// closes it.
    private static func read(_ fd: Int32, _ stream: Stream, into shared: Shared, copyingTo copy: FileHandle?,
                             onLine: (@Sendable (Stream, String) -> Void)?) {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            copy?.write(Data(buffer[0..<count]))
            pending.append(contentsOf: buffer[0..<count])
            var complete: [String] = []
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                complete.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
            if let onLine { for line in complete { onLine(stream, line) } }
            if !complete.isEmpty { shared.append(complete, to: stream) }
        }
        close(fd)
        try? copy?.close()
        shared.ended(stream)
    }
}

/// What the readers, the termination handler, the timers and the waiters share. Apart from the ``LineProcess``,
/// so that a pending timer does not keep the process object (whose release kills the child) alive.
private final class Shared: Sendable {
    struct Lines {
        var kept: [String] = []
        /// The index of `kept[0]`: lines dropped before it.
        var first = 0
        var ended = false
        var end: Int { first + kept.count }
    }

    struct State {
        let name: String
        var output = Lines()
        var errors = Lines()
        /// The child has exited (it may not be reaped yet): no more signals.
        var exiting = false
        var status: Int32?
        var waiters: [Int: @Sendable (State) -> Bool] = [:]
        var nextWaiter = 0

        subscript(stream: LineProcess.Stream) -> Lines {
            get { stream == .output ? output : errors }
            set { if stream == .output { output = newValue } else { errors = newValue } }
        }
    }

    private let state: Locked<State>
    let name: String

    init(name: String) {
        self.name = name
        state = Locked(State(name: name))
    }

    var hasExited: Bool { state.withLock { $0.status != nil } }

    /// Runs `body` (a signal to the child) while the child has not exited, under the lock the exit takes.
    func unlessExited(_ body: () -> Void) {
        state.withLock { state in if !state.exiting { body() } }
    }

    func exiting() { state.withLock { $0.exiting = true } }
    func lines(_ stream: LineProcess.Stream) -> [String] { state.withLock { $0[stream].kept } }
    func count(_ stream: LineProcess.Stream) -> Int { state.withLock { $0[stream].end } }

    func append(_ lines: [String], to stream: LineProcess.Stream) {
        change { state in
            state[stream].kept += lines
            let excess = state[stream].kept.count - LineProcess.keptLines
            if excess > 0 {
                state[stream].kept.removeFirst(excess)
                state[stream].first += excess
            }
        }
    }

    func ended(_ stream: LineProcess.Stream) { change { $0[stream].ended = true } }
    func exited(_ status: Int32) { change { $0.status = status } }

    /// Changes the state, then answers every waiter whose answer is now known.
    private func change(_ body: (inout State) -> Void) {
        state.withLock { state in
            body(&state)
            let current = state
            for (id, waiter) in current.waiters where waiter(current) { state.waiters[id] = nil }
        }
    }

    /// Waits until `decide` gives an answer (it is asked now and after every change), at most `timeout`.
    func wait<Value: Sendable>(
        _ what: String, timeout: Duration, _ decide: @escaping @Sendable (State) -> Result<Value, LoopbackError>?
    ) async throws -> Value {
        // Answered once, by whoever comes first: the awaited change, the bound, a cancellation.
        let answer = Promise<Result<Value, any Error>>()
        let (id, now) = state.withLock { state -> (Int, Result<Value, LoopbackError>?) in
            let id = state.nextWaiter
            state.nextWaiter += 1
            if let decided = decide(state) { return (id, decided) }
            state.waiters[id] = { state in
                guard let decided = decide(state) else { return false }
                answer.fulfil(decided.mapError { $0 })
                return true
            }
            return (id, nil)
        }
        if let now { return try now.get() }
        let result = await withTaskCancellationHandler {
            await answer.value(orAfter: timeout, .failure(TimedOut()))
        } onCancel: {
            if forget(id) { answer.fulfil(.failure(CancellationError())) }
        }
        if case .failure(let error) = result, error is TimedOut {
            _ = forget(id)
            let log = lines(.errors).suffix(10).joined(separator: "\n")
            throw LoopbackError("\(name): no \(what) within \(timeout)\(log.isEmpty ? "" : "; its last errors:\n\(log)")")
        }
        return try result.get()
    }

    /// What a wait's answer is when its bound came first.
    private struct TimedOut: Error {}

    /// Removes a waiter; false when it was answered already.
    private func forget(_ id: Int) -> Bool {
        state.withLock { $0.waiters.removeValue(forKey: id) != nil }
    }
}
