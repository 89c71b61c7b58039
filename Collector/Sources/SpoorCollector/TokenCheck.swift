import Hummingbird
import SpoorCollectorCore

/// `--token`: the one bearer-token check, shared by `POST /v1/batch` and the live events API.
enum TokenCheck {
    /// Whether `request` may pass: no token is configured, or it sends `Authorization: Bearer` with one of them.
    static func admits(_ request: Request, tokens: Set<String>) -> Bool {
        guard !tokens.isEmpty else { return true }
        let header = request.headers[.authorization] ?? ""
        return header.hasPrefix("Bearer ") && tokens.contains(String(header.dropFirst("Bearer ".count)))
    }

    /// The answer to a request that may not pass.
    static let refusal = IngestResponse.error(401, "unauthorized", "a valid Authorization: Bearer token is required")
}
