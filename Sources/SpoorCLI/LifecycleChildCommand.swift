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

/// `spoor _lifecycle-child DIR MODE` (hidden): a small program with a real lifecycle, for the process
/// tests. It creates a tracker over DIR with the process lifecycle source, shows a page, tracks an
/// event, makes it durable and prints `ready`. Then, by MODE:
/// - `wait`: waits to be signalled (SIGTERM/SIGINT end the session; SIGKILL does not);
/// - `exit`: returns normally (the exit hook ends the session);
/// - `crash`: dies of SIGSEGV (the crash hook records it).
enum LifecycleChildCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.count == 2, ["wait", "exit", "crash"].contains(args[1]) else {
            return CLI.fail("usage: spoor _lifecycle-child DIR wait|exit|crash", status: 64)
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
        tracker.attach(ProcessLifecycleSource())
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
        case "crash":
            raise(SIGSEGV)
            return 1
        default:
            while true { sleep(60) }
        }
    }
}
