import Foundation
import SpoorSystem

/// Everything the fatal-signal handler touches, allocated before it is installed so the handler itself
/// allocates nothing.
private struct CrashHandlerState {
    var fd: Int32
    /// The marker's formatting buffer; the marker is retained forever once installed.
    var buffer: UnsafeMutablePointer<UInt8>
    /// The handlers that were installed before ours, indexed by signal number, to chain to.
    var previous: UnsafeMutablePointer<sigaction>
    /// NUL-terminated reason per signal number (`SIGSEGV`, …).
    var reasons: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
}

/// Read by the handler; written only by `install`, under `installLock`, before signals are routed to it.
nonisolated(unsafe) private var crashHandlerState: UnsafeMutablePointer<CrashHandlerState>?
private let signalSlots = 65

/// Set by the fatal-signal handler: the process is crashing, so the exit hooks must not end the session
/// (whoever recovers the process's log does, after `AppCrashed`), and must not run code on a broken heap.
nonisolated(unsafe) var processIsCrashing = false

/// Records fatal signals in the process's crash marker (in its log directory), then lets the previous handler (or the default action)
/// take the process down.
enum CrashSignalHandler {
    /// The signals that end a process with a crash.
    static let fatalSignals: [(Int32, String)] = [
        (SIGSEGV, "SIGSEGV"), (SIGBUS, "SIGBUS"), (SIGILL, "SIGILL"),
        (SIGFPE, "SIGFPE"), (SIGABRT, "SIGABRT"), (SIGTRAP, "SIGTRAP"),
    ]

    /// Installs the handler for every fatal signal, writing to `marker`. Installing again (a second
    /// tracker in the same process) switches the handler to the new marker and keeps the original
    /// chain. Not for concurrent use with itself; the tracker calls it once at start.
    static func install(marker: CrashMarker) {
        if let state = crashHandlerState {
            // Already installed: only the marker changes. Markers given to the handler stay alive for good (they are tiny).
            _ = Unmanaged.passRetained(marker)
            state.pointee = CrashHandlerState(
                fd: marker.fd, buffer: marker.buffer, previous: state.pointee.previous, reasons: state.pointee.reasons
            )
            return
        }
        let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: signalSlots)
        previous.initialize(repeating: sigaction(), count: signalSlots)
        let reasons = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: signalSlots)
        reasons.initialize(repeating: nil, count: signalSlots)
        for (signal, name) in fatalSignals { reasons[Int(signal)] = strdup(name) }
        let state = UnsafeMutablePointer<CrashHandlerState>.allocate(capacity: 1)
        _ = Unmanaged.passRetained(marker)
        state.initialize(to: CrashHandlerState(fd: marker.fd, buffer: marker.buffer, previous: previous, reasons: reasons))
        crashHandlerState = state

        for (signal, _) in fatalSignals {
            (previous + Int(signal)).pointee = SystemCall.installHandler(handleFatalSignal, for: signal, flags: 0)
        }
    }
}

/// The handler: only async-signal-safe work — clock_gettime, the marker's pwrite, sigaction, raise.
private func handleFatalSignal(_ signal: Int32) {
    guard let state = crashHandlerState, signal > 0, Int(signal) < signalSlots else { return }
    processIsCrashing = true
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    let millis = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    if let reason = state.pointee.reasons[Int(signal)] {
        reason.withMemoryRebound(to: UInt8.self, capacity: 16) { bytes in
            CrashMarker.writeRecord(
                fd: state.pointee.fd, buffer: state.pointee.buffer, time: millis, reason: bytes, count: strlen(reason)
            )
        }
    }
    // Chain: put the previous handler back and deliver the signal to it once we return.
    sigaction(signal, state.pointee.previous + Int(signal), nil)
    raise(signal)
}
