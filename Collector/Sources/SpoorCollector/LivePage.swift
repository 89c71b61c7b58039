import Foundation
import Hummingbird
import SpoorCollectorCore

/// The live events page: `GET /` with its style sheet and script, and `GET /v1/events/recent`, the JSON the page
/// polls (docs/collector.md, "Live events page").
///
/// The page and its assets hold no data and are served to anyone, since a browser sends no bearer token when it
/// navigates; the page asks for the token when the API answers 401. The API takes the same token check as
/// `POST /v1/batch`.
struct LivePage: Sendable {
    /// The events the page shows.
    let feed: LiveFeed
    /// `--token`.
    let tokens: Set<String>
    /// The text `GET /metrics` serves, for the counters beside the chart.
    let metricsText: @Sendable () -> String

    func register(on router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in Self.asset(Self.html, type: "text/html; charset=utf-8", extra: Self.pageHeaders) }
        router.get("/assets/live.css") { _, _ in Self.asset(Self.css, type: "text/css; charset=utf-8") }
        router.get("/assets/live.js") { _, _ in Self.asset(Self.script, type: "text/javascript; charset=utf-8") }
        router.get("/v1/events/recent") { request, _ in recent(request) }
        for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
            router.on("/v1/events/recent", method: method) { _, _ in
                jsonResponse(.error(405, "method_not_allowed", "use GET /v1/events/recent"), headers: [.allow: "GET"])
            }
        }
    }

    /// `GET /v1/events/recent?after=POSITION&limit=N`.
    func recent(_ request: Request) -> Response {
        guard TokenCheck.admits(request, tokens: tokens) else {
            return jsonResponse(TokenCheck.refusal, headers: [.wwwAuthenticate: "Bearer"])
        }
        let parameters = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        switch LiveQuery.parse(parameters) {
        case .failure(let answer):
            return jsonResponse(answer)
        case .success(let query):
            let read = feed.read(after: query.after, limit: query.limit, now: Int64(Date().timeIntervalSince1970 * 1000))
            let body = read.json(counters: LiveCounters(prometheusText: metricsText()))
            return jsonResponse(IngestResponse(status: 200, body: body), headers: [.cacheControl: "no-store"])
        }
    }

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
