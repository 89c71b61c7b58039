import Foundation
import SpoorCollectorCore
import SpoorCollectorTestSupport
import SpoorFaultProxy
import SpoorLoopback
import SpoorModel
import SpoorWire
import Testing

/// The live events page in Debian's chromium, headless, started by the test, against a collector process: the
/// page's own script, polling the real API. Every wait is on the page's DOM (a `MutationObserver`) with a deadline.
@Suite("The live events page in a real browser", .timeLimit(.minutes(10)))
struct LivePageBrowserTests {
    /// The events `make demo` stored, as its `--ndjson` wrote them (from a real run of scripts/demo).
    static func demoEvents() throws -> [Event] {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/demo-events.jsonl")
        return try String(contentsOf: fixture, encoding: .utf8).split(separator: "\n").map { try EventJSON.decode(String($0)) }
    }

    /// A row of the table as the page shows it.
    struct Row: Decodable, Equatable {
        var position: Int
        var name: String
        var time: String
        var distinct: String
        var auto: Bool
        var hidden: Bool
    }

    static let rows = """
    [...document.querySelectorAll("#rows tr")].map((row) => ({
      position: Number(row.dataset.position), name: row.dataset.name, time: row.cells[0].textContent,
      distinct: row.cells[2].textContent, auto: row.querySelector(".badge") !== null, hidden: row.hidden }))
    """
    static let rowCount = ##"document.querySelectorAll("#rows tr").length"##
    static func text(_ id: String) -> String { "document.getElementById(\"\(id)\").textContent" }

    /// A fresh directory for the browser's profile and the screenshot; the screenshot stays for people to look at.
    static func workDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-live-page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// How the page writes an event time in UTC: the clock, after the date when it is not `today` (yyyy-MM-dd).
    static func shownTime(_ milliseconds: Int64, today: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        let date = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        let clock = String(format: "%02d:%02d:%02d.%03d", parts.hour!, parts.minute!, parts.second!, Int(milliseconds % 1000))
        return date == today ? clock : "\(date) \(clock)"
    }

    /// JSON with every number a double and object members sorted: equal for equal values however written.
    static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .int(let number): .double(Double(number))
        case .array(let elements): .array(elements.map(canonical))
        case .object(let members):
            .object(members.map { JSONValue.Member($0.key, canonical($0.value)) }.sorted { $0.key < $1.key })
        default: value
        }
    }

    @Test("The demo's events, live: sign-in, rows newest first with times and auto-track marks, counts by name, the counters, filters, an event's JSON, pause, at most 500 rows; a screenshot")
    func demo() async throws {
        let started = ContinuousClock.now
        // The page reads with an admin token; batches are sent with it too (an admin token may also send).
        let token = "demo-admin-token-0123456789"
        let auth = ["Authorization": "Bearer \(token)"]
        let collector = try await CollectorProcess(arguments: ["--token", "demo-ingest-token-0123456789", "--admin-token", token])
        let directory = try Self.workDirectory()
        defer { try? FileManager.default.removeItem(at: directory.appendingPathComponent("profile")) }
        try await Chromium.with(directory: directory) { browser in
            let origin = "http://127.0.0.1:\(collector.port)"
            let page = try await browser.openPage()
            try await page.navigate(origin + "/")

            // Sign-in: the API answers 401, so the page asks for the token; a wrong one is refused and forgotten.
            try await page.wait(until: #"document.body.dataset.state === "login" && !document.getElementById("login").hidden"#)
            try await page.click("#token")
            try await page.type("not-the-token")
            try await page.click("#login-form button")
            try await page.wait(until: #"!document.getElementById("login-error").hidden"#)
            #expect(try await page.evaluate(Self.text("login-error")) == .string("The collector did not accept that token."))
            #expect(try await page.evaluate(#"sessionStorage.getItem("spoor.collector.token")"#) == .null)
            try await page.click("#token")
            try await page.type(token)
            try await page.click("#login-form button")
            try await page.wait(until: #"document.body.dataset.state === "live" && !document.getElementById("empty").hidden"#)
            #expect(try await page.evaluate(#"sessionStorage.getItem("spoor.collector.token")"#) == .string(token))
            #expect(try await page.evaluate(Self.rowCount) == .int(0))

            // The demo's events arrive, in two batches as from two installs.
            let events = try Self.demoEvents()
            #expect(events.count == 35)
            var batches: [[Event]] = []
            for event in events {
                if let last = batches.last?.last, last.anonymousID == event.anonymousID { batches[batches.count - 1].append(event) } else { batches.append([event]) }
            }
            var frames: [[UInt8]] = []
            var batchOf: [String] = []
            for batch in batches {
                let frame = try Frames.frame(batch)
                let answer = try await collector.request(body: frame, headers: auth)
                #expect(answer.status == 200)
                let batchID = try #require(try JSONValue.parse(answer.body)["batch_id"]?.text)
                batchOf += Array(repeating: batchID, count: batch.count)
                frames.append(frame)
            }
            try await page.wait(until: "\(Self.rowCount) === 35")
            let today = try #require(try await page.evaluate("new Date().toISOString().slice(0, 10)").text)
            let rows = try await page.decode([Row].self, Self.rows)
            #expect(rows.map(\.position) == Array((1...35).reversed()))
            #expect(rows.map(\.name) == events.reversed().map(\.name))
            #expect(rows.map(\.distinct) == events.reversed().map(\.distinctID))
            #expect(rows.map(\.time) == events.reversed().map { Self.shownTime($0.time, today: today) })
            #expect(rows.map(\.auto) == events.reversed().map { $0.lib.method == .autoTrack })
            #expect(rows.contains { $0.auto } && rows.contains { !$0.auto })
            #expect(try await page.evaluate(Self.text("shown")) == .string("35 events"))

            // Counts by name, the most frequent first, as the store's GROUP BY would give them.
            struct NameCount: Decodable, Equatable { var name: String; var count: String }
            let names = try await page.decode([NameCount].self, """
                [...document.querySelectorAll("#names li")].map((item) => ({ name: item.dataset.name, count: item.querySelector(".count").textContent }))
                """)
            let expected = Dictionary(grouping: events, by: \.name).map { (name: $0.key, count: $0.value.count) }
                .sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }
            #expect(names == expected.map { NameCount(name: $0.name, count: String($0.count)) })
            #expect(try await page.evaluate(Self.text("count-stored")) == .string("35"))

            // A batch sent again is a duplicate: counted beside the chart, no new row. This is what make demo shows.
            #expect(try await collector.request(body: frames[1], headers: auth).body.contains(#""duplicate":true"#))
            try await page.wait(until: "\(Self.text("count-duplicates")) === \"1\"")
            #expect(try await page.evaluate(Self.text("count-refused")) == .string("0"))
            #expect(try await page.evaluate(#"document.getElementById("chart-bars").getAttribute("d").length > 0"#) == .bool(true))
            let screenshot = directory.appendingPathComponent("live-page.png")
            try await page.screenshot(to: screenshot)
            print("live events page screenshot: \(screenshot.path)")

            // Filters: by name (the list beside the table sets it), by distinct id, by property text, and together.
            let clicks = events.filter { $0.name == "$AppClick" }
            try await page.click(#"#names li[data-name="$AppClick"]"#)
            try await page.wait(until: "\(Self.text("shown")) === \"\(clicks.count) of 35 events\"")
            let shownClicks = try await page.decode([Row].self, Self.rows).filter { !$0.hidden }
            #expect(shownClicks.map(\.name) == Array(repeating: "$AppClick", count: clicks.count))
            #expect(try await page.evaluate(#"document.getElementById("filter-name").value"#) == .string("$AppClick"))
            try await page.click(#"#names li[data-name="$AppClick"]"#)  // again: all events
            try await page.wait(until: "\(Self.text("shown")) === \"35 events\"")

            let user = try #require(events.first { $0.loginID != nil }?.distinctID)
            let byUser = events.filter { $0.distinctID.lowercased().contains(user.lowercased()) }
            #expect(byUser.count > 0 && byUser.count < 35)
            try await page.click("#filter-distinct")
            try await page.type(user.uppercased())  // matched without regard to case
            try await page.wait(until: "\(Self.text("shown")) === \"\(byUser.count) of 35 events\"")
            #expect(try await page.decode([Row].self, Self.rows).filter { !$0.hidden }.map(\.distinct) == byUser.reversed().map(\.distinctID))
            try await page.evaluate(#"document.getElementById("filter-distinct").value = ""; document.getElementById("filters").dispatchEvent(new Event("input"))"#)

            let word = "sencha"
            let withWord = events.indices.filter { EventRows([events[$0]]).row(0).properties.lowercased().contains(word) }
            #expect(withWord.count > 0 && withWord.count < 35)
            try await page.click("#filter-text")
            try await page.type(word)
            try await page.wait(until: "\(Self.text("shown")) === \"\(withWord.count) of 35 events\"")
            #expect(try await page.decode([Row].self, Self.rows).filter { !$0.hidden }.map(\.position) == withWord.reversed().map { $0 + 1 })
            try await page.click(#"#names li[data-name="$AppClick"]"#)
            let both = withWord.filter { events[$0].name == "$AppClick" }
            try await page.wait(until: "\(Self.text("shown")) === \"\(both.count) of 35 events\"")
            try await page.evaluate("""
                for (const id of ["filter-name", "filter-distinct", "filter-text"]) document.getElementById(id).value = "";
                document.getElementById("filters").dispatchEvent(new Event("input"))
                """)
            try await page.wait(until: "\(Self.text("shown")) === \"35 events\"")

            // A click opens the event's whole JSON: its columns as stored, its lib and properties, its batch.
            let index = try #require(events.firstIndex { $0.name == "AddToCart" })
            let event = events[index]
            try await page.click("#rows tr[data-position=\"\(index + 1)\"]")
            try await page.wait(until: #"!document.getElementById("detail").hidden"#)
            let shown = try JSONValue.parse(try #require(try await page.evaluate(Self.text("detail-json")).text))
            let row = EventRows([event]).row(0)
            #expect(shown["name"] == .string("AddToCart"))
            #expect(shown["position"]?.integer == index + 1)
            #expect(shown["batch_id"] == .string(batchOf[index]))
            #expect(shown["distinct_id"] == .string(event.distinctID) && shown["anonymous_id"] == .string(event.anonymousID))
            #expect(shown["login_id"] == (event.loginID.map(JSONValue.string) ?? .null))
            #expect(shown["track_id"] == .string(row.trackID) && shown["type"] == .string(row.type))
            #expect(shown["time_ms"]?.integer == Int(event.time))
            #expect(Self.canonical(shown["properties"] ?? .null) == Self.canonical(try JSONValue.parse(row.properties)))
            #expect(Self.canonical(shown["lib"] ?? .null) == Self.canonical(try JSONValue.parse(row.lib)))
            #expect(try await page.evaluate(##"document.querySelector("#rows tr.selected").dataset.position"##) == .string(String(index + 1)))
            try await page.press("Escape", code: 27)
            try await page.wait(until: #"document.getElementById("detail").hidden"#)

            // Pause holds the rows still and says what is waiting; resume shows it. Meanwhile two batches are refused
            // (a bad frame, a missing token), as /metrics counts them. One wait covers both: whichever poll sees each.
            try await page.click("#pause")
            try await page.wait(until: #"document.body.dataset.state === "paused""#)
            #expect(try await collector.request(body: Array("not a frame".utf8), headers: auth).status == 400)
            #expect(try await collector.request(body: frames[0]).status == 401)
            #expect(try await collector.request(body: Frames.frame(Frames.events(3, name: "WhilePaused")), headers: auth).status == 200)
            try await page.wait(until: "\(Self.text("notice")).includes(\"3 new events are waiting\") && \(Self.text("count-refused")) === \"2\"")
            #expect(try await page.evaluate(Self.rowCount) == .int(35))
            #expect(try await page.evaluate(##"document.querySelector("#rows tr").dataset.position"##) == .string("35"))
            try await page.click("#pause")
            try await page.wait(until: "\(Self.rowCount) === 38")
            #expect(try await page.decode([Row].self, Self.rows).prefix(3).map(\.position) == [38, 37, 36])
            #expect(try await page.evaluate(#"document.getElementById("notice").hidden"#) == .bool(true))

            // However many arrive, the page keeps the newest 500 rows.
            #expect(try await collector.request(body: Frames.frame(Frames.events(600)), headers: auth).status == 200)
            try await page.wait(until: ##"document.querySelector("#rows tr").dataset.position === "638""##)
            let bounded = try await page.decode([Row].self, Self.rows)
            #expect(bounded.count == 500)
            #expect(bounded.last?.position == 139)
            #expect(try await page.evaluate(Self.text("count-stored")) == .string("638"))

            // Nothing went wrong in the page, and it asked nothing of any other origin.
            #expect(page.exceptions.isEmpty, "\(page.exceptions)")
            let problems = page.logEntries.filter { $0.level == "error" || $0.level == "warning" }
                .filter { !($0.source == "network" && $0.text.contains("401")) }  // the sign-in's refused requests
            #expect(problems.isEmpty, "\(problems)")
            let elsewhere = page.requestedURLs.filter { !$0.hasPrefix(origin + "/") && !$0.hasPrefix("data:") }
            #expect(elsewhere.isEmpty, "\(elsewhere)")
            #expect(page.requestedURLs.contains("\(origin)/assets/live.js"))
            print("live events page browser test: \(ContinuousClock.now - started)")
        }
    }

    @Test("Without tokens the page opens on the feed; when the collector restarts it starts over with the new run's events")
    func restart() async throws {
        // The page keeps one origin, the proxy's; the restarted collector listens on a port of its own choosing.
        let collector = try await CollectorProcess()
        let proxy = try FaultProxy(upstreamPort: collector.port)
        defer { proxy.stop() }
        let directory = try Self.workDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Chromium.with(directory: directory) { browser in
            let page = try await browser.openPage()
            try await page.navigate("http://127.0.0.1:\(proxy.port)/")
            try await page.wait(until: #"document.body.dataset.state === "live""#)
            #expect(try await page.evaluate(#"document.getElementById("login").hidden"#) == .bool(true))
            #expect(try await collector.request(body: Frames.frame(Frames.events(5, name: "BeforeRestart"))).status == 200)
            try await page.wait(until: "\(Self.rowCount) === 5")

            // While it is down the proxy answers 502, which the page shows, and it polls again.
            proxy.upstreamPort = nil
            proxy.upstreamPort = try await collector.restart()
            #expect(try await collector.request(body: Frames.frame(Frames.events(anonymousID: "anon-after", sequences: 0..<2))).status == 200)
            try await page.wait(until: "\(Self.rowCount) === 2 && document.body.dataset.state === \"live\"")
            let rows = try await page.decode([Row].self, Self.rows)
            #expect(rows.map(\.position) == [2, 1])
            #expect(rows.map(\.name) == ["ViewProduct", "ViewProduct"])
            #expect(try await page.evaluate(Self.text("count-stored")) == .string("2"))
            #expect(page.exceptions.isEmpty, "\(page.exceptions)")
        }
    }
}
