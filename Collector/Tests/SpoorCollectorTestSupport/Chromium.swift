public import Foundation
public import SpoorWire
import SpoorLoopback
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A headless Chromium (Debian's `chromium`, which `scripts/bootstrap` installs) driven over the DevTools
/// protocol, for the live events page's tests.
///
/// The protocol runs over `--remote-debugging-pipe`: JSON messages, each ending in a NUL byte, written to the
/// browser's file descriptor 3 and read from its descriptor 4. No port to discover and no WebSocket. One reader
/// thread hands each answer to the request waiting for it, and keeps the events.
public final class Chromium: Sendable {
    /// Where the browser's own output goes (its profile is beside it).
    public let logURL: URL
    private let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let state = Locked(State())
    private let writing = Locked(())

    private struct State {
        var nextID = 1
        var pending: [Int: Promise<Answer>] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 1
        var events: [JSONValue] = []
        /// Why nothing more will come, once the pipe closed or the test closed the browser.
        var closed: String?
        /// The process was waited for and the descriptors closed.
        var shutDown = false
    }

    /// What a command or an awaited event comes to: its value, or why it did not come.
    private typealias Answer = Result<JSONValue, CollectorTestError>

    /// Someone waiting for an event: registered before the action that causes it, so the event may come first
    /// (the promise is fulfilled then, and read when the test awaits it).
    private struct Waiter {
        var method: String
        var session: String?
        var answer = Promise<Answer>()
    }

    /// Events kept for inspection; a test makes far fewer.
    private static let maxEvents = 20_000

    /// The browser: `SPOOR_CHROMIUM` when set, else `chromium` on the `PATH`.
    public static func executable() throws -> String {
        if let path = ProcessInfo.processInfo.environment["SPOOR_CHROMIUM"] { return path }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories {
            let candidate = "\(directory)/chromium"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CollectorTestError("chromium is not installed: scripts/bootstrap installs Debian's chromium package")
    }

    /// Starts a headless browser whose profile and output live in `directory`, and waits until it answers.
    public init(directory: URL) async throws {
        let executable = try Self.executable()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logURL = directory.appendingPathComponent("chromium.log")
        // Pipes with both ends above 4 and close-on-exec, so that the browser gets exactly its two ends as 3 and 4.
        let (browserReads, toBrowser) = try Self.pipe()
        let (fromBrowser, browserWrites) = try Self.pipe()
        self.toBrowser = toBrowser
        self.fromBrowser = fromBrowser
        var arguments = [
            executable, "--headless", "--remote-debugging-pipe", "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
            "--disable-domain-reliability", "--no-pings", "--mute-audio", "--hide-scrollbars", "--force-device-scale-factor=1",
            // Containers often have a small /dev/shm; chromium then crashes unless it uses /tmp.
            "--disable-dev-shm-usage",
        ]
        // Chromium's sandbox refuses to run as root.
        if geteuid() == 0 { arguments.append("--no-sandbox") }
        arguments.append("about:blank")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, browserReads, 3)
        posix_spawn_file_actions_adddup2(&actions, browserWrites, 4)
        Spawning.closeInherited(&actions, from: 5)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        closeDescriptor(browserReads)
        closeDescriptor(browserWrites)
        guard spawned == 0 else {
            closeDescriptor(toBrowser)
            closeDescriptor(fromBrowser)
            throw CollectorTestError("cannot start \(executable): error \(spawned)")
        }
        self.pid = pid
        Thread.detachNewThread { [self] in readLoop() }
        do {
            _ = try await send("Browser.getVersion")
        } catch {
            await close()
            throw CollectorTestError("chromium did not answer on its DevTools pipe: \(error)\n\(logTail())")
        }
    }

    deinit {
        if !state.withLock({ $0.shutDown }) { _ = kill(pid, SIGKILL) }
    }

    /// Sends one DevTools command (to the page of `session`, or to the browser) and returns its result; throws
    /// the protocol's error, or when no answer came within `timeout`.
    @discardableResult
    package func send(_ method: String, _ parameters: [JSONValue.Member] = [], session: String? = nil,
                      timeout: Duration = waitBound) async throws -> JSONValue {
        let answer = Promise<Answer>()
        let id: Int? = state.withLock { state in
            guard state.closed == nil else { return nil }
            defer { state.nextID += 1 }
            state.pending[state.nextID] = answer
            return state.nextID
        }
        guard let id else { throw CollectorTestError("\(method): the browser is gone: \(closedReason)") }
        defer { _ = state.withLock { $0.pending.removeValue(forKey: id) } }
        var members: [JSONValue.Member] = [.init("id", .int(Int64(id))), .init("method", .string(method)), .init("params", .object(parameters))]
        if let session { members.append(.init("sessionId", .string(session))) }
        guard write(Array(JSONValue.object(members).serialized.utf8) + [0]) else {
            throw CollectorTestError("\(method): cannot write to the browser")
        }
        return try await answer.value(orAfter: timeout, .failure(CollectorTestError("\(method): no answer within \(timeout)"))).get()
    }

    /// Runs `action` and returns the first event `method` (of `session`, when given) that arrives after it began.
    package func event(_ method: String, session: String?, timeout: Duration = waitBound,
                       after action: @Sendable () async throws -> Void) async throws -> JSONValue {
        let waiter = Waiter(method: method, session: session)
        let key: Int? = state.withLock { state in
            guard state.closed == nil else { return nil }
            defer { state.nextWaiter += 1 }
            state.waiters[state.nextWaiter] = waiter
            return state.nextWaiter
        }
        guard let key else { throw CollectorTestError("no \(method): the browser is gone: \(closedReason)") }
        defer { _ = state.withLock { $0.waiters.removeValue(forKey: key) } }
        try await action()
        return try await waiter.answer.value(orAfter: timeout, .failure(CollectorTestError("no \(method) within \(timeout)"))).get()
    }

    /// The events received so far named `method` (of `session`, when given), oldest first.
    public func events(_ method: String, session: String? = nil) -> [JSONValue] {
        state.withLock { state in
            state.events.filter { $0["method"]?.text == method && (session == nil || $0["sessionId"]?.text == session) }
        }
    }

    /// Opens a new tab of `width` × `height` CSS pixels, in UTC, with the domains the tests watch enabled.
    public func openPage(width: Int = 1440, height: Int = 900) async throws -> BrowserPage {
        let target = try await send("Target.createTarget", [.init("url", .string("about:blank"))])
        guard let targetID = target["targetId"]?.text else { throw CollectorTestError("Target.createTarget: \(target.serialized)") }
        let attached = try await send("Target.attachToTarget", [.init("targetId", .string(targetID)), .init("flatten", .bool(true))])
        guard let session = attached["sessionId"]?.text else { throw CollectorTestError("Target.attachToTarget: \(attached.serialized)") }
        for domain in ["Page", "Runtime", "Network", "Log"] { try await send("\(domain).enable", session: session) }
        try await send("Emulation.setDeviceMetricsOverride", [
            .init("width", .int(Int64(width))), .init("height", .int(Int64(height))),
            .init("deviceScaleFactor", .int(1)), .init("mobile", .bool(false)),
        ], session: session)
        try await send("Emulation.setTimezoneOverride", [.init("timezoneId", .string("UTC"))], session: session)
        return BrowserPage(browser: self, session: session)
    }

    /// Starts a browser as ``init(directory:)`` does, gives it to `body`, and closes it afterwards, whether `body`
    /// returned or threw.
    public static func with<Value: Sendable>(directory: URL, _ body: (Chromium) async throws -> Value) async throws -> Value {
        let browser = try await Chromium(directory: directory)
        let value: Value
        do {
            value = try await body(browser)
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
        return value
    }

    /// Closes the browser (gracefully, else after half a minute SIGKILL) and waits for it to exit, on a thread of
    /// its own; later calls do nothing.
    public func close() async {
        let (first, running) = state.withLock { state in
            defer { state.shutDown = true }
            return (!state.shutDown, state.closed == nil)
        }
        guard first else { return }
        if running {
            // The answer is not waited for: the process's exit, below, is what counts.
            let message: JSONValue = .object([.init("id", .int(0)), .init("method", .string("Browser.close")), .init("params", .object([]))])
            _ = write(Array(message.serialized.utf8) + [0])
        }
        let pid = self.pid
        let exited = Promise<Void>()
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exited.fulfil(())
        }
        let inTime = Promise<Bool>()
        Task { await exited.value; inTime.fulfil(true) }
        if await !inTime.value(orAfter: .seconds(30), false) {
            _ = kill(pid, SIGKILL)
            await exited.value
        }
        finish("closed by the test")
        closeDescriptor(toBrowser)
    }

    /// The last lines of the browser's own output, for failure messages.
    public func logTail(lines: Int = 20) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return "chromium's output (\(logURL.path)), last lines:\n" + text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    // MARK: The pipe

    private var closedReason: String { state.withLock { $0.closed ?? "" } }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard makePipe(&fds) == 0 else { throw CollectorTestError("pipe: errno \(errno)") }
        let high = fds.map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        fds.forEach(closeDescriptor)
        guard high.allSatisfy({ $0 >= 10 }) else { throw CollectorTestError("fcntl: errno \(errno)") }
        return (high[0], high[1])
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        writing.withLock { _ in
            var done = 0
            while done < bytes.count {
                let count = bytes.withUnsafeBytes { writeDescriptor(toBrowser, $0.baseAddress! + done, $0.count - done) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
    }

    private func readLoop() {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var scanned = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fromBrowser, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.append(contentsOf: chunk[0..<count])
            while let end = buffer[scanned...].firstIndex(of: 0) {
                let message = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                scanned = 0
                dispatch(message)
            }
            scanned = buffer.count
        }
        closeDescriptor(fromBrowser)
        finish("chromium closed its DevTools pipe (it exited)")
    }

    private func dispatch(_ text: String) {
        guard let message = try? JSONValue.parse(text) else { return }
        if case .int(let id)? = message["id"] {
            let waiting = state.withLock { $0.pending.removeValue(forKey: Int(id)) }
            if let error = message["error"] {
                waiting?.fulfil(.failure(CollectorTestError("DevTools error: \(error.serialized)")))
            } else {
                waiting?.fulfil(.success(message["result"] ?? .object([])))
            }
            return
        }
        guard let method = message["method"]?.text else { return }
        let session = message["sessionId"]?.text
        let parameters = message["params"] ?? .object([])
        let woken = state.withLock { state in
            if state.events.count < Self.maxEvents { state.events.append(message) }
            var woken: [Promise<Answer>] = []
            for (key, waiter) in state.waiters where waiter.method == method && (waiter.session == nil || waiter.session == session) {
                state.waiters.removeValue(forKey: key)
                woken.append(waiter.answer)
            }
            return woken
        }
        // The first such event after the waiter registered is its answer.
        for answer in woken { answer.fulfil(.success(parameters)) }
    }

    /// Fails everything still waiting: nothing more will come.
    private func finish(_ reason: String) {
        let (pending, waiters) = state.withLock { state in
            if state.closed == nil { state.closed = reason }
            defer {
                state.pending = [:]
                state.waiters = [:]
            }
            return (Array(state.pending.values), state.waiters.values.map(\.answer))
        }
        for answer in pending + waiters {
            answer.fulfil(.failure(CollectorTestError("the browser is gone: \(reason)")))
        }
    }
}

/// One tab of a ``Chromium``.
public struct BrowserPage: Sendable {
    /// The browser.
    public let browser: Chromium
    /// The DevTools session attached to the tab.
    public let session: String

    /// Loads `url` and returns once its load event fired.
    public func navigate(_ url: String) async throws {
        _ = try await browser.event("Page.loadEventFired", session: session) {
            let answer = try await browser.send("Page.navigate", [.init("url", .string(url))], session: session)
            if let error = answer["errorText"]?.text, !error.isEmpty { throw CollectorTestError("cannot load \(url): \(error)") }
        }
    }

    /// The value of a JavaScript expression in the page (a promise is awaited); throws what the page threw.
    @discardableResult
    package func evaluate(_ expression: String, timeout: Duration = waitBound) async throws -> JSONValue {
        let answer = try await browser.send("Runtime.evaluate", [
            .init("expression", .string(expression)), .init("returnByValue", .bool(true)), .init("awaitPromise", .bool(true)),
        ], session: session, timeout: timeout)
        if let details = answer["exceptionDetails"] {
            let description = details["exception"]?["description"]?.text ?? details["text"]?.text ?? details.serialized
            throw CollectorTestError("the page threw: \(description)")
        }
        return answer["result"]?["value"] ?? .null
    }

    /// Waits until the JavaScript expression `condition` is truthy in the page, and returns its value.
    ///
    /// The wait is the page's own: the expression is checked again at each change of the DOM (a
    /// `MutationObserver`), so nothing polls; past `timeout` it fails with the page's text at that moment.
    @discardableResult
    package func wait(until condition: String, timeout: Duration = waitBound) async throws -> JSONValue {
        let milliseconds = timeout.milliseconds
        let described = JSONValue.string(condition).serialized
        let script = """
        new Promise((resolve, reject) => {
          const probe = () => { try { return (\(condition)); } catch (error) { return undefined; } };
          const first = probe();
          if (first) { resolve(first); return; }
          const observer = new MutationObserver(() => {
            const value = probe();
            if (value) { observer.disconnect(); clearTimeout(timer); resolve(value); }
          });
          observer.observe(document.documentElement, { subtree: true, childList: true, characterData: true, attributes: true });
          const timer = setTimeout(() => {
            observer.disconnect();
            reject(new Error("not true within \(milliseconds) ms: " + \(described) + "\\npage text: " + document.body.innerText.slice(0, 800)));
          }, \(milliseconds));
        })
        """
        return try await evaluate(script, timeout: timeout + .seconds(5))
    }

    /// Clicks the middle of the first element that matches a CSS selector, with the mouse, as a person would:
    /// the click lands on whatever is on top there.
    public func click(_ selector: String) async throws {
        let point = try await evaluate("""
        (() => {
          const element = document.querySelector(\(JSONValue.string(selector).serialized));
          if (!element) return null;
          element.scrollIntoView({ block: "center" });
          const box = element.getBoundingClientRect();
          return [box.x + box.width / 2, box.y + box.height / 2];
        })()
        """)
        guard let coordinates = point.elements?.compactMap(\.number), coordinates.count == 2 else {
            throw CollectorTestError("nothing on the page matches \(selector)")
        }
        for type in ["mousePressed", "mouseReleased"] {
            try await browser.send("Input.dispatchMouseEvent", [
                .init("type", .string(type)), .init("x", .double(coordinates[0])), .init("y", .double(coordinates[1])),
                .init("button", .string("left")), .init("clickCount", .int(1)),
            ], session: session)
        }
    }

    /// Types `text` into the element that has the focus.
    public func type(_ text: String) async throws {
        try await browser.send("Input.insertText", [.init("text", .string(text))], session: session)
    }

    /// Presses and releases a key that types nothing, such as `Escape` (with its Windows key code, which DevTools
    /// wants).
    public func press(_ key: String, code: Int) async throws {
        for type in ["rawKeyDown", "keyUp"] {
            try await browser.send("Input.dispatchKeyEvent", [
                .init("type", .string(type)), .init("key", .string(key)), .init("code", .string(key)),
                .init("windowsVirtualKeyCode", .int(Int64(code))),
            ], session: session)
        }
    }

    /// The value of a JavaScript expression, through JSON, decoded as `type`.
    public func decode<Value: Decodable>(_ type: Value.Type, _ expression: String) async throws -> Value {
        guard let json = try await evaluate("JSON.stringify(\(expression))").text else {
            throw CollectorTestError("\(expression) has no JSON form")
        }
        return try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    /// Saves a PNG of what the tab shows.
    public func screenshot(to url: URL) async throws {
        let answer = try await browser.send("Page.captureScreenshot", [.init("format", .string("png"))], session: session)
        guard let base64 = answer["data"]?.text, let data = Data(base64Encoded: base64) else {
            throw CollectorTestError("Page.captureScreenshot gave no PNG")
        }
        try data.write(to: url)
    }

    /// Uncaught exceptions in the page so far.
    public var exceptions: [String] {
        browser.events("Runtime.exceptionThrown", session: session).map { event in
            let details = event["params"]?["exceptionDetails"]
            return details?["exception"]?["description"]?.text ?? details?["text"]?.text ?? event.serialized
        }
    }

    /// The browser's log entries for the page so far (Content-Security-Policy violations, failed loads, console
    /// errors), as `level source: text`.
    public var logEntries: [(level: String, source: String, text: String)] {
        browser.events("Log.entryAdded", session: session).compactMap { event in
            guard let entry = event["params"]?["entry"] else { return nil }
            return (entry["level"]?.text ?? "", entry["source"]?.text ?? "", entry["text"]?.text ?? "")
        }
    }

    /// The URLs the page requested so far.
    public var requestedURLs: [String] {
        browser.events("Network.requestWillBeSent", session: session).compactMap { $0["params"]?["request"]?["url"]?.text }
    }
}

extension JSONValue {
    /// The string, when this is one.
    public var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number as an integer, when this is a whole number.
    public var integer: Int? {
        switch self {
        case .int(let number): Int(number)
        case .double(let number) where number.rounded() == number: Int(number)
        default: nil
        }
    }

    /// The number, when this is one.
    public var number: Double? {
        switch self {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// The elements, when this is an array.
    public var elements: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}

#if canImport(Glibc)
private func makePipe(_ fds: inout [Int32]) -> Int32 { Glibc.pipe(&fds) }
private func closeDescriptor(_ fd: Int32) { _ = Glibc.close(fd) }
private func writeDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, bytes, count) }
#else
private func makePipe(_ fds: inout [Int32]) -> Int32 { Darwin.pipe(&fds) }
private func closeDescriptor(_ fd: Int32) { _ = Darwin.close(fd) }
private func writeDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, bytes, count) }
#endif
