#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import SpoorTracker

nonisolated(unsafe) private var childTracker: Tracker?
nonisolated(unsafe) private var childApplication: NSObject?

/// `spoor _lifecycle-child DIR MODE [SOURCE]` (hidden): a small program with a real lifecycle, for the
/// process tests. It creates a tracker over DIR with a lifecycle source (SOURCE: `process`, the default;
/// `notifications`, a NotificationCenter source fed the UIKit launch notifications; `manual`), shows a page,
/// tracks an event, makes it durable and prints `ready`. Then, by MODE:
/// - `wait`: waits to be signalled (SIGTERM/SIGINT end the session; SIGKILL does not);
/// - `exit`: returns normally (the exit hook ends the session);
/// - `shutdown`: `await tracker.shutdown()`, then returns normally (the README's Linux example);
/// - `crash`: dies of SIGSEGV (the crash hook records it).
enum LifecycleChildCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.count == 2 || args.count == 3, ["wait", "exit", "shutdown", "crash"].contains(args[1]),
            ["process", "notifications", "manual"].contains(args.count == 3 ? args[2] : "process")
        else {
            return CLI.fail("usage: spoor _lifecycle-child DIR wait|exit|shutdown|crash [process|notifications|manual]", status: 64)
        }
        // A child inherits its parent thread's signal mask; the test runner's blocks SIGTERM and SIGINT.
        var nothing = sigset_t()
        sigemptyset(&nothing)
        sigprocmask(SIG_SETMASK, &nothing, nil)
        var configuration = Configuration(storageDirectory: URL(fileURLWithPath: args[0], isDirectory: true))
        configuration.autoTrack = .all
        configuration.durability = .always
        let tracker: Tracker
        do {
            tracker = try Tracker(configuration: configuration)
        } catch {
            return CLI.fail("\(error)", status: 1)
        }
        // Like a program's tracker, it lives until the process ends (the exit hook still needs it).
        childTracker = tracker
        switch args.count == 3 ? args[2] : "process" {
        case "notifications":
            let center = NotificationCenter()
            let application = NSObject()
            childApplication = application
            tracker.attach(NotificationCenterLifecycleSource(center: center, application: application) { .notRunning })
            for name in ["UIApplicationDidFinishLaunchingNotification", "UIApplicationDidBecomeActiveNotification"] {
                center.post(name: Notification.Name(name), object: application)
            }
        case "manual":
            let source = ManualLifecycleSource()
            tracker.attach(source)
            source.send(.didFinishLaunching(.inactive))
            source.send(.didBecomeActive)
        default:
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
        switch args[1] {
        case "exit":
            return 0
        case "shutdown":
            let done = DispatchSemaphore(value: 0)
            Task {
                await tracker.shutdown()
                done.signal()
            }
            done.wait()
            return 0
        case "crash":
            raise(SIGSEGV)
            return 1
        default:
            while true { sleep(60) }
        }
    }
}
