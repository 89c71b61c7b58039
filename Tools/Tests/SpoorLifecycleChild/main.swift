// `SpoorLifecycleChild DIR MODE [SOURCE]`: a small program with a real lifecycle, for the process tests (a test
// helper, not part of the shipped `spoor`). It creates a tracker over DIR with the given lifecycle source, shows
// a page, tracks an event, makes it durable and prints `ready`. Then, by MODE:
// - `wait`: waits to be signalled (SIGTERM/SIGINT end the session; SIGKILL does not);
// - `exit`: returns normally (the exit hook ends the session);
// - `shutdown`: `await tracker.shutdown(…)`, then returns normally (the README's Linux example);
// - `crash`: dies of SIGSEGV (the crash hook records it).
// SOURCE is `process` (the default), `notifications` or `manual`.
import Foundation
import SpoorTracker

enum Mode: String { case wait, exit, shutdown, crash }
enum Source: String { case process, notifications, manual }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SpoorLifecycleChild: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard (2...3).contains(arguments.count), let mode = Mode(rawValue: arguments[1]) else {
    fail("usage: SpoorLifecycleChild DIR wait|exit|shutdown|crash [process|notifications|manual]")
}
guard let source = Source(rawValue: arguments.count == 3 ? arguments[2] : "process") else {
    fail("unknown source '\(arguments[2])'")
}
let directory = arguments[0]

func output(_ text: String) {
    let bytes = Array(text.utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

// A child inherits its parent thread's signal mask; the test runner's blocks SIGTERM and SIGINT.
var nothing = sigset_t()
sigemptyset(&nothing)
sigprocmask(SIG_SETMASK, &nothing, nil)
var configuration = Configuration(storageDirectory: URL(fileURLWithPath: directory, isDirectory: true))
configuration.autoTrack.events = .all
configuration.storage.durability = .always
// Like a program's tracker, a top-level constant: it lives until the process ends (the exit hook needs it).
let tracker: Tracker
do {
    tracker = try Tracker(configuration: configuration)
} catch {
    fail("\(error)")
}
// The lifecycle source holds the application weakly; this keeps it.
let application = NSObject()
switch source {
case .notifications:
    let center = NotificationCenter()
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
await tracker.flush()
output("ready\n")
switch mode {
case .exit:
    exit(0)
case .shutdown:
    // The README's `shutdown()` waits 5 s at most; a test on a loaded machine gives it minutes.
    await tracker.shutdown(timeout: .seconds(300))
    exit(0)
case .crash:
    raise(SIGSEGV)
    exit(1)
case .wait:
    while true { pause() }  // until the test signals it
}
