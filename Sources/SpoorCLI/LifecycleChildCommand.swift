#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Dispatch
import Foundation
import SpoorTracker

nonisolated(unsafe) private var childTracker: Tracker?
nonisolated(unsafe) private var childApplication: NSObject?

/// `spoor _lifecycle-child DIR MODE [SOURCE]` (hidden): a small program with a real lifecycle, for the process
/// tests. It creates a tracker over DIR with the process lifecycle source, shows a page, tracks an
/// event, makes it durable and prints `ready`. Then, by MODE:
/// - `wait`: waits to be signalled (SIGTERM/SIGINT end the session; SIGKILL does not);
/// - `exit`: returns normally (the exit hook ends the session);
/// - `shutdown`: `await tracker.shutdown()`, then returns normally (the README's Linux example);
/// - `crash`: dies of SIGSEGV (the crash hook records it).
struct LifecycleChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_lifecycle-child",
        abstract: "A small program with a real lifecycle, for the process tests.",
        shouldDisplay: false
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case wait, exit, shutdown, crash
    }

    enum Source: String, ExpressibleByArgument, CaseIterable {
        case process, notifications, manual
    }

    @Argument(help: "The storage directory.")
    var directory: String

    @Argument(help: "How the child ends: wait, exit, shutdown or crash.")
    var mode: Mode

    @Argument(help: "The lifecycle source: process (default), notifications or manual.")
    var source: Source = .process

    func run() throws {
        // A child inherits its parent thread's signal mask; the test runner's blocks SIGTERM and SIGINT.
        var nothing = sigset_t()
        sigemptyset(&nothing)
        sigprocmask(SIG_SETMASK, &nothing, nil)
        var configuration = Configuration(storageDirectory: URL(fileURLWithPath: directory, isDirectory: true))
        configuration.autoTrack = .all
        configuration.durability = .always
        let tracker: Tracker
        do {
            tracker = try Tracker(configuration: configuration)
        } catch {
            throw CLI.failure("spoor _lifecycle-child: \(error)", status: 1)
        }
        // Like a program's tracker, it lives until the process ends (the exit hook still needs it).
        childTracker = tracker
        switch source {
        case .notifications:
            let center = NotificationCenter()
            let application = NSObject()
            childApplication = application
            tracker.attach(NotificationCenterLifecycleSource(center: center, application: application) { .notRunning })
            for name in ["UIApplicationDidFinishLaunchingNotification", "UIApplicationDidBecomeActiveNotification"] {
                center.post(name: Notification.Name(name), object: application)
            }
        case .manual:
            let manual = ManualLifecycleSource()
            tracker.attach(manual)
            manual.send(.didFinishLaunching(.inactive))
            manual.send(.didBecomeActive)
        case .process:
            tracker.attach(ProcessLifecycleSource())
        }
        tracker.pageAppear("main", page: PageInfo(screenName: "MainWindow", title: "Main", url: "app://main"))
        tracker.track("ChildWorked", properties: ["pid": .int(Int64(getpid()))])
        let flushed = DispatchSemaphore(value: 0)
        Task {
            await tracker.flush()
            flushed.signal()
        }
        flushed.wait()
        CLI.output(Array("ready\n".utf8))
        switch mode {
        case .exit:
            return
        case .shutdown:
            let done = DispatchSemaphore(value: 0)
            Task {
                await tracker.shutdown()
                done.signal()
            }
            done.wait()
            return
        case .crash:
            raise(SIGSEGV)
            throw ExitCode(1)
        case .wait:
            while true { sleep(60) }
        }
    }
}
