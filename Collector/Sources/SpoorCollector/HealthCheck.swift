import Logging
import Metrics
import SpoorCollectorCore
import SpoorSystem

/// `GET /healthz`'s answer: whether the store answers, asked at most once per ``interval`` however many clients
/// ask, and never twice at once (a request that comes while the store is being asked waits for that answer).
///
/// `/healthz` is open to anyone (load balancers call it without a token), so it must cost the store nothing more
/// than one round trip a second, and say nothing about the store but yes or no.
final class HealthCheck: Sendable {
    private let store: any BatchStore
    private let interval: Duration
    private let logger: Logger
    private let checks = Counter(label: "spoor_collector_health_checks_total")

    private enum State {
        case idle(last: (healthy: Bool, at: ContinuousClock.Instant)?)
        case checking(Task<Bool, Never>)
    }

    private let state = Locked(State.idle(last: nil))

    init(store: any BatchStore, interval: Duration = .seconds(1), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    /// Whether the store answered when last asked, asking it again when that was more than ``interval`` ago.
    func isHealthy() async -> Bool {
        enum Next {
            case answer(Bool)
            case wait(Task<Bool, Never>)
        }
        let next = state.withLock { state -> Next in
            switch state {
            case .checking(let task):
                return .wait(task)
            case .idle(let last):
                if let last, ContinuousClock.now - last.at < interval { return .answer(last.healthy) }
                let task = Task { await self.check() }
                state = .checking(task)
                return .wait(task)
            }
        }
        switch next {
        case .answer(let healthy): return healthy
        case .wait(let task): return await task.value
        }
    }

    private func check() async -> Bool {
        checks.increment()
        var healthy = true
        do {
            try await store.ping()
        } catch {
            healthy = false
            logger.warning("health check: the store does not answer", metadata: ["error": "\(redactingSecrets(error.message))"])
        }
        state.withLock { $0 = .idle(last: (healthy, ContinuousClock.now)) }
        return healthy
    }
}
