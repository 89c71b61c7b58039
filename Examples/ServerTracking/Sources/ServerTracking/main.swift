// A Hummingbird server that tracks one event per request for the request's user. SIGTERM (or SIGINT): the server
// finishes the requests in flight, then the tracker stores and uploads every event and the process exits.
//
// Settings from the environment: SPOOR_STORAGE (the tracker's directory), SPOOR_COLLECTOR (where events go),
// PORT (8080; 0 for any free one), SPOOR_UPLOAD_TIMEOUT (seconds the shutdown waits for the upload, 10).
import Foundation
import Hummingbird
import RequestTracking
import SpoorServiceLifecycle
import SpoorTracker

let environment = ProcessInfo.processInfo.environment
// The server configuration: no device presets or auto-tracking; a request never waits for the writer.
let tracker = try Tracker(configuration: .server(
    storageDirectory: URL(fileURLWithPath: environment["SPOOR_STORAGE"] ?? "spoor-storage"),
    serverURL: environment["SPOOR_COLLECTOR"].flatMap { URL(string: $0) }))

let router = Router()
router.add(middleware: TrackingMiddleware(tracker: tracker))
router.get("hello") { _, _ in "hello\n" }

// The tracker's service comes before the HTTP server in the group, so it stops after the server's last request.
let service = TrackerService(
    tracker: tracker, uploadTimeout: .seconds(Int(environment["SPOOR_UPLOAD_TIMEOUT"] ?? "") ?? 10),
    onShutdown: { say("tracker shut down: \($0)") })
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: Int(environment["PORT"] ?? "") ?? 8080)),
    services: [service],
    onServerRunning: { say("listening on 127.0.0.1:\($0.localAddress?.port ?? 0)") })
try await app.runService()

/// Writes `line` to standard output at once (`print` to a pipe waits for a full buffer), for scripts that wait for it.
func say(_ line: String) { FileHandle.standardOutput.write(Data("\(line)\n".utf8)) }
