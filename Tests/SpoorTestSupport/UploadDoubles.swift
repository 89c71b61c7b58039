import Dispatch
public import Foundation
public import SpoorLog
public import SpoorUpload

/// An ``UploadClock`` that moves only when a test says so. Sleepers wake when ``advance(by:)`` passes their
/// deadline; a test awaits ``sleepers(atLeast:)`` to know the uploader is waiting, instead of sleeping.
public final class ManualUploadClock: UploadClock, @unchecked Sendable {
    // @unchecked: everything is under `lock`.
    private let lock = NSLock()
    private var current: Duration = .zero
    private let wallStart: Int64
    private var nextID = 0
    private var sleeping: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
    private let watchers = ConditionWatchers()
    /// Every duration asked of ``sleep(for:)``, in order.
    public private(set) var requested: [Duration] = []

    /// Creates a clock at monotonic zero and wall time `wallStart` (milliseconds since the epoch).
    public init(wallStart: Int64 = 1_700_000_000_000) {
        self.wallStart = wallStart
    }

    public func now() -> Duration { lock.withLock { current } }

    public func wallMilliseconds() -> Int64 {
        lock.withLock { wallStart + current.components.seconds * 1000 + current.components.attoseconds / 1_000_000_000_000_000 }
    }

    public func sleep(for duration: Duration) async throws {
        let id = lock.withLock { () -> Int in
            nextID += 1
            requested.append(duration)
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (ready, cancelled, count) = lock.withLock { () -> (Bool, Bool, Int) in
                    if Task.isCancelled { return (false, true, 0) }
                    if duration <= .zero { return (true, false, 0) }
                    sleeping[id] = (current + duration, continuation)
                    return (false, false, sleeping.count)
                }
                if count > 0 { watchers.check() }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let continuation = lock.withLock { sleeping.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
            watchers.check()
        }
    }

    /// Moves time forward, waking every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
            current += duration
            let due = sleeping.filter { $0.value.deadline <= current }
            for key in due.keys { sleeping[key] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
        watchers.check()
    }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { lock.withLock { sleeping.count } }

    /// The deadlines (from now) of the sleepers, shortest first.
    public var pendingDelays: [Duration] { lock.withLock { sleeping.values.map { $0.deadline - current }.sorted() } }

    /// Waits until at least `count` tasks sleep on this clock; false if that did not happen within `timeout`
    /// of real time (a failing test ends instead of hanging; generous, as a loaded test run can hold tasks back).
    public func sleepers(atLeast count: Int, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in sleeperCount >= count }
    }

    /// Waits until no task sleeps on this clock; false if some still did after `timeout` of real time.
    public func noSleepers(timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in sleeperCount == 0 }
    }

    /// Waits until some task sleeps with at most `delay` left; false after `timeout` of real time.
    public func sleeper(within delay: Duration, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in pendingDelays.contains { $0 <= delay } }
    }

    /// Waits until some task sleeps with exactly `delay` left; false after `timeout` of real time.
    public func sleeper(exactly delay: Duration, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in pendingDelays.contains(delay) }
    }
}

/// Tasks waiting for a condition, each resumed once: when it holds (looked at now and at every `check()`),
/// or with false at its real-time deadline.
final class ConditionWatchers: @unchecked Sendable {
    // @unchecked: everything is under `lock`.
    private let lock = NSLock()
    private var nextID = 0
    private var waiting: [Int: (condition: @Sendable () -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]

    func wait(timeout: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = lock.withLock { () -> Int in
                nextID += 1
                waiting[nextID] = (condition, continuation)
                return nextID
            }
            if condition() { resume(id, true) }
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in resume(id, false) }
        }
    }

    /// Looks at every condition again (call it after the state they read changed).
    func check() {
        let all = lock.withLock { waiting.map { ($0.key, $0.value.condition) } }
        for (id, condition) in all where condition() { resume(id, true) }
    }

    private func resume(_ id: Int, _ value: Bool) {
        let continuation = lock.withLock { waiting.removeValue(forKey: id)?.continuation }
        continuation?.resume(returning: value)
    }
}

/// An ``HTTPTransportClient`` that plays a script: each request gets the next step, then `otherwise` forever.
/// It records every request, so tests check headers, order and that no request is made in a busy loop.
public final class ScriptedHTTPClient: HTTPTransportClient, @unchecked Sendable {
    /// What one request gets.
    public enum Step: Sendable {
        /// An answer with this status, headers and body.
        case respond(Int, headers: [String: String] = [:], body: String = "")
        /// No answer: the client throws this error.
        case fail(HTTPClientError)
        /// No answer until the request is cancelled (a stalled server).
        case stall
        /// The answer `handler` makes from the request.
        case handle(@Sendable (HTTPRequest) -> HTTPResponse)
    }

    private let lock = NSLock()
    private var script: [Step]
    private let otherwise: Step
    private var recorded: [HTTPRequest] = []
    private var inFlight = 0
    private var maxInFlight = 0
    private let watchers = ConditionWatchers()

    /// Creates a client playing `script`, then `otherwise` (default: `200`).
    public init(_ script: [Step] = [], otherwise: Step = .respond(200, body: #"{"stored":true}"#)) {
        self.script = script
        self.otherwise = otherwise
    }

    /// Every request received, in order.
    public var requests: [HTTPRequest] { lock.withLock { recorded } }
    /// The most requests in flight at once.
    public var maxConcurrentRequests: Int { lock.withLock { maxInFlight } }

    /// Appends steps to the script.
    public func append(_ steps: [Step]) { lock.withLock { script += steps } }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let step = lock.withLock { () -> Step in
            recorded.append(request)
            inFlight += 1
            maxInFlight = max(maxInFlight, inFlight)
            return script.isEmpty ? otherwise : script.removeFirst()
        }
        watchers.check()
        defer { lock.withLock { inFlight -= 1 } }
        switch step {
        case .respond(let status, let headers, let body):
            return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
        case .fail(let error):
            throw error
        case .stall:
            while true { try await Task.sleep(for: .seconds(3600)) }
        case .handle(let handler):
            return handler(request)
        }
    }

    /// Waits until at least `count` requests were received; false after `timeout` of real time.
    public func requests(atLeast count: Int, timeout: Duration = .seconds(300)) async -> Bool {
        await watchers.wait(timeout: timeout) { [self] in requests.count >= count }
    }
}
