import Foundation
import SpoorSystem

/// The command line's standard output, written with the package's system-call layer.
public enum StandardOutput {
    /// Writes all of `bytes` to standard output; false when it is closed (a reader that went away).
    @discardableResult
    public static func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = SystemCall.retryingInterrupts {
                    Foundation.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }

    /// Whether standard output is a pipe or socket whose reader has gone away (`spoor events -f | head`).
    public static var isGone: Bool {
        var descriptor = pollfd(fd: 1, events: 0, revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLERR | POLLHUP) != 0
    }
}

/// SIGINT and SIGTERM, turned from process-ending signals into a request to stop, for a command that follows a
/// log until told to stop and then ends cleanly (its last lines written whole).
public final class StopSignals: Sendable {
    private let stopped = Promise<Void>()
    /// The dispatch sources, kept alive as long as this object.
    private let sources: Locked<[any DispatchSourceSignal]>

    /// Starts handling the signals; they no longer end the process.
    public init() {
        let queue = DispatchQueue(label: "spoor.stop-signals")
        var sources: [any DispatchSourceSignal] = []
        let stopped = stopped
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { stopped.fulfil(()) }
            source.resume()
            sources.append(source)
        }
        self.sources = Locked(sources)
        // A process started by a test runner may inherit a mask that blocks them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Waits up to `timeout`; true when a stop signal has come.
    public func wait(timeout: Duration) -> Bool {
        stopped.wait(timeout: timeout) != nil
    }
}
