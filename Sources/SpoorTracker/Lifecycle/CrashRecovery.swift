internal import SpoorModel

/// Recovers what a process that died left unsaid (L10, P7): `AppCrashed` after a crash, then
/// `$AppPageLeave` for the pages it was timing, then the missing `$AppEnd`, all timed to the last moment
/// the process is known to have been alive and marked `$app_end_reason: "recovered"`.
enum CrashRecovery {
    /// `$app_end_reason` on a recovered `$AppEnd`.
    static let recoveredReason = "recovered"

    /// The events a process that died left unsaid, in order; empty when it ended cleanly. Emitted by the next
    /// launch for files found where a process keeps its own, and by the adopter of a gone process's log.
    static func effects(checkpoint: LifecycleCheckpoint?, crash: CrashRecord?) -> [AutoTrackEffect] {
        var effects: [AutoTrackEffect] = []
        var lastAlive = checkpoint?.lastAlive
        if let crash {
            effects.append(.emit(.appCrashed, ["app_crashed_reason": .string(crash.reason)], time: crash.time))
            // The process was alive until it crashed: extend the monotonic end by the same wall distance.
            if let known = lastAlive, crash.time > known.wall {
                let extra = UInt64(crash.time - known.wall) * 1_000_000
                lastAlive = LifecycleInstant(wall: crash.time, monotonic: known.monotonic + extra)
            }
        }
        guard let checkpoint, let sessionStart = checkpoint.sessionStart, let end = lastAlive else {
            return effects
        }
        for page in checkpoint.pages {
            guard let start = page.timerStart else { continue }
            effects.append(.emit(.appPageLeave, page.leaveProperties(start: start, now: end.monotonic, reason: recoveredReason), time: end.wall))
        }
        let duration = EventDuration.seconds(from: sessionStart.monotonic, to: end.monotonic)
        effects.append(.emit(.appEnd, AppEnd(duration: duration, reason: recoveredReason).properties, time: end.wall))
        return effects
    }
}
