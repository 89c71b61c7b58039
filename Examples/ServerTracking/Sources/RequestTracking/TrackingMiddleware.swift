public import HTTPTypes
public import Hummingbird
public import SpoorTracker

/// Tracks one `Request` event for every request, under the request's user, before the request is handled.
///
/// The user is the `X-User-ID` header, or ``anonymousUser`` when the request has none. (A real service takes the id
/// from its authentication instead: a header is whatever the client says.) The value is hostile input and is treated
/// as such by the tracker: an id that is empty, longer than 255 bytes or holds a NUL is rejected (the event is not
/// recorded, `tracker.counters.rejected` counts it) and the request goes on. `track` never blocks the request: it
/// checks the event and hands it to the tracker's writer thread.
public struct TrackingMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The distinct id of a request without `X-User-ID`.
    public static var anonymousUser: String { "anonymous" }
    /// The header that names the user.
    public static var userHeader: HTTPField.Name { HTTPField.Name("X-User-ID")! }

    let tracker: Tracker

    /// A middleware that tracks into `tracker`.
    public init(tracker: Tracker) {
        self.tracker = tracker
    }

    /// Tracks the request, then hands it on.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        tracker.track(
            "Request", distinctID: request.headers[Self.userHeader] ?? Self.anonymousUser,
            properties: ["method": .string(request.method.rawValue), "path": .string(request.uri.path)])
        return try await next(request, context)
    }
}
