import Foundation
import Hummingbird
import SpoorCollectorCore
import SpoorSystem

/// The live events page: `GET /` with its style sheet and script, and `GET /v1/events/recent`, the JSON the page
/// polls (docs/collector.md, "Live events page").
///
/// The page and its assets hold no data and are served to anyone, since a browser sends no bearer token when it
/// navigates; the page asks for the token when the API answers 401. The API is a read route (``AccessPolicy``):
/// an admin token, or with none configured, a client on loopback.
struct LivePage: Sendable {
    /// The events the page shows.
    let feed: LiveFeed
    /// The tokens, for who may read.
    let credentials: Credentials
    /// The text `GET /metrics` serves, for the counters beside the chart.
    let metricsText: @Sendable () -> String

    func register(on router: Router<CollectorContext>) {
        router.get("/") { _, _ in Self.asset(Self.html, type: "text/html; charset=utf-8", extra: Self.pageHeaders) }
        router.get("/assets/live.css") { _, _ in Self.asset(Self.css, type: "text/css; charset=utf-8") }
        router.get("/assets/live.js") { _, _ in Self.asset(Self.script, type: "text/javascript; charset=utf-8") }
        router.get("/v1/events/recent") { request, context in recent(request, context: context) }
        for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
            router.on("/v1/events/recent", method: method) { _, _ in
                jsonResponse(.error(405, "method_not_allowed", "use GET /v1/events/recent"), headers: [.allow: "GET"])
            }
        }
    }

    /// `GET /v1/events/recent?after=POSITION&limit=N`.
    func recent(_ request: Request, context: CollectorContext) -> Response {
        let caller = credentials.caller(token: RequestHeaders.bearerToken(request.headers[.authorization]))
        if let refusal = credentials.policy.refusal(.read, caller: caller, fromLoopback: context.isFromLoopback) {
            logAnswer(refusal, context: context)
            return jsonResponse(refusal)
        }
        switch LiveQuery.parse(query: Substring(request.uri.query ?? "")) {
        case .failure(let answer):
            logAnswer(answer, context: context)
            return jsonResponse(answer)
        case .success(let query):
            let body = answers.answer(query, latest: feed.latest) {
                let read = feed.read(after: query.after, limit: query.limit, now: Int64(Date().timeIntervalSince1970 * 1000))
                return read.json(counters: LiveCounters(prometheusText: metricsText()))
            }
            return jsonResponse(IngestResponse(status: 200, body: body), headers: [.cacheControl: "no-store"])
        }
    }

    /// Answers built in the last second, shared by the pages that poll for the same thing.
    let answers = LiveAnswers()

    // The files under LivePage/, compiled into the binary: nothing is read from disk or fetched at run time.
    private static let html = ByteBuffer(bytes: PackageResources.index_html)
    private static let css = ByteBuffer(bytes: PackageResources.live_css)
    private static let script = ByteBuffer(bytes: PackageResources.live_js)

    /// The page renders what clients sent, so it runs only its own script, loads only from the collector, and
    /// cannot be framed.
    private static let pageHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .xContentTypeOptions: "nosniff",
    ]

    private static func asset(_ body: ByteBuffer, type: String, extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: type, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"]
        for field in extra where headers[field.name] == nil { headers.append(field) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}

/// The answers of `GET /v1/events/recent` built within the last second, by query: however many pages poll, each
/// answer is built at most once a second while no event arrives (pages that are up to date all ask for the same
/// position), and every new event makes the next answer new.
final class LiveAnswers: Sendable {
    private struct Entry {
        var body: String
        var latest: UInt64
        var built: ContinuousClock.Instant
    }

    /// The most answers kept; past it they are all dropped.
    static let capacity = 64
    private let entries = Locked<[LiveQuery: Entry]>([:])

    /// The answer to `query` built since the feed's newest position was `latest`, less than a second ago; else `build`'s.
    func answer(_ query: LiveQuery, latest: UInt64, build: () -> String) -> String {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[query] }), entry.latest == latest, now - entry.built < .seconds(1) {
            return entry.body
        }
        let body = build()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll() }
            entries[query] = Entry(body: body, latest: latest, built: now)
        }
        return body
    }
}
