/// Who a request is, by the bearer token it sent.
public enum Caller: Sendable, Hashable {
    /// It sent an admin token (`--admin-token`).
    case admin
    /// It sent an ingest token (`--token`): the one every app binary carries.
    case ingest
    /// It sent no token, or one that matches none.
    case anonymous
}

/// What a route gives away, and so who may call it.
public enum RouteKind: Sendable, Hashable {
    /// `POST /v1/batch`: stores events.
    case ingest
    /// `GET /v1/events/recent` and `GET /metrics`: read what everyone sent, or the server's numbers.
    case read
}

/// Who may call which route: the one rule every route goes through.
///
/// - Ingest: anyone when no ingest token is configured (a loopback collector, or `--insecure`); else an ingest or an
///   admin token.
/// - Read: with an admin token configured, that token only (an ingest token is refused with 403: it ships inside
///   every app, so it must not read anyone's events); without one, clients on the loopback interface only.
public struct AccessPolicy: Sendable, Hashable {
    /// Whether ingest tokens are configured.
    public var ingestTokens: Bool
    /// Whether admin tokens are configured.
    public var adminTokens: Bool

    /// Creates the policy for the tokens configured.
    public init(ingestTokens: Bool, adminTokens: Bool) {
        self.ingestTokens = ingestTokens
        self.adminTokens = adminTokens
    }

    /// nil when `caller` may call a route of `kind` (from a loopback address or not); else the answer refusing it.
    public func refusal(_ kind: RouteKind, caller: Caller, fromLoopback: Bool) -> IngestResponse? {
        switch kind {
        case .ingest:
            guard ingestTokens, caller == .anonymous else { return nil }
            return Self.unauthorized
        case .read:
            if adminTokens {
                switch caller {
                case .admin: return nil
                case .ingest: return Self.ingestTokenReads
                case .anonymous: return Self.unauthorized
                }
            }
            return fromLoopback ? nil : Self.loopbackOnly
        }
    }

    /// No token, or one that matches none.
    public static let unauthorized = IngestResponse.error(401, "unauthorized", "a valid Authorization: Bearer token is required")
    /// An ingest token on a read route.
    public static let ingestTokenReads = IngestResponse.error(403, "forbidden", "this token may send batches, not read them")
    /// A read route from another machine with no admin token configured.
    public static let loopbackOnly = IngestResponse.error(
        403, "forbidden", "this collector has no admin token, so it answers this route on its loopback address only"
    )
}
