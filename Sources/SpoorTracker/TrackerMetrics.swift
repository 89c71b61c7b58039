import CoreMetrics
import Metrics
import SpoorLog
import SpoorSystem

/// Exports ``TrackerCounters`` through swift-metrics, when the host bootstrapped a backend
/// (`MetricsSystem.bootstrap`) before creating the tracker.
///
/// Counters (every one also carries ``Configuration/Diagnostics/metricsDimensions``):
/// - `spoor_events_accepted_total`
/// - `spoor_events_rejected_total`, dimension `rule` (a ``ValidationRule`` raw value)
/// - `spoor_events_dropped_total`, dimension `reason`: `log`, `hook`, `shutdown` or `buffer` (dropped oldest first
///   at the memory bound, ``Configuration/BufferPolicy/dropOldest``)
///
/// Nothing runs on the caller's thread for accepted events: the writer adds what changed since its last
/// export after each group it stores. Rejections are rare and counted where they happen.
final class TrackerMetrics: Sendable {
    private let accepted: Counter
    private let rejected: [ValidationRule: Counter]
    private let droppedByLog: Counter
    private let droppedByHook: Counter
    private let droppedAfterShutdown: Counter
    private let droppedWhenBufferFull: Counter
    /// The totals already exported, for deltas (only the writer exports, but keep it simple and locked).
    private let exported = Locked(Totals())

    struct Totals: Equatable {
        var accepted = 0
        var droppedByLog = 0
        var droppedByHook = 0
        var droppedAfterShutdown = 0
        var droppedWhenBufferFull = 0
    }

    /// `nil` when no backend is bootstrapped: exporting would only cost time.
    static func make(dimensions: [(String, String)]) -> TrackerMetrics? {
        if MetricsSystem.factory is NOOPMetricsHandler { return nil }
        return TrackerMetrics(dimensions: dimensions)
    }

    private init(dimensions: [(String, String)]) {
        accepted = Counter(label: "spoor_events_accepted_total", dimensions: dimensions)
        var rejected: [ValidationRule: Counter] = [:]
        for rule in ValidationRule.allCases {
            rejected[rule] = Counter(label: "spoor_events_rejected_total", dimensions: dimensions + [("rule", rule.rawValue)])
        }
        self.rejected = rejected
        droppedByLog = Counter(label: "spoor_events_dropped_total", dimensions: dimensions + [("reason", "log")])
        droppedByHook = Counter(label: "spoor_events_dropped_total", dimensions: dimensions + [("reason", "hook")])
        droppedAfterShutdown = Counter(label: "spoor_events_dropped_total", dimensions: dimensions + [("reason", "shutdown")])
        droppedWhenBufferFull = Counter(label: "spoor_events_dropped_total", dimensions: dimensions + [("reason", "buffer")])
    }

    func rejected(_ rule: ValidationRule) {
        rejected[rule]?.increment()
    }

    /// Adds what grew since the last export.
    func export(_ totals: Totals) {
        let last = exported.withLock { last -> Totals in
            defer { last = totals }
            return last
        }
        guard last != totals else { return }
        if totals.accepted > last.accepted { accepted.increment(by: totals.accepted - last.accepted) }
        if totals.droppedByLog > last.droppedByLog { droppedByLog.increment(by: totals.droppedByLog - last.droppedByLog) }
        if totals.droppedByHook > last.droppedByHook { droppedByHook.increment(by: totals.droppedByHook - last.droppedByHook) }
        if totals.droppedAfterShutdown > last.droppedAfterShutdown {
            droppedAfterShutdown.increment(by: totals.droppedAfterShutdown - last.droppedAfterShutdown)
        }
        if totals.droppedWhenBufferFull > last.droppedWhenBufferFull {
            droppedWhenBufferFull.increment(by: totals.droppedWhenBufferFull - last.droppedWhenBufferFull)
        }
    }
}
