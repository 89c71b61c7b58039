import Hummingbird
import Logging
import NIOCore
import SpoorCollectorCore
import SpoorSystem

/// The request context of the collector's routes: Hummingbird's (its logger carries the request id), and the
/// connection, to know whether the client is on loopback and to close a connection the collector gives up on.
struct CollectorContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    var remoteAddress: SocketAddress? { channel.remoteAddress }

    /// Whether the client connected from a loopback address (127.0.0.0/8 or ::1).
    var isFromLoopback: Bool {
        guard let address = channel.remoteAddress, let ip = address.ipAddress else { return false }
        switch address.protocol {
        case .inet: return ip.hasPrefix("127.")
        case .inet6: return ip == "::1" || ip.hasPrefix("::ffff:127.")
        default: return false
        }
    }

    /// Stops reading the connection (a body past its deadline): the answer being written still goes out, then the
    /// connection closes.
    func stopReading() {
        let channel = self.channel
        channel.close(mode: .input).whenFailure { _ in
            // A channel that cannot close only its input (TLS) closes whole, once the answer had time to go out.
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }

    /// Closes the connection `delay` from now: the rest of a refused body is read and dropped meanwhile (closing
    /// with unread bytes would reset the connection before the client read the answer), but no longer than that.
    func close(after delay: Duration) {
        let channel = self.channel
        channel.eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds)) {
            channel.close(promise: nil)
        }
    }
}

/// Adds what every answer carries: `X-Request-Id` (the id the server's log line for the request names) and
/// `X-Content-Type-Options: nosniff` (a browser never reads a JSON answer as anything else). Outermost, so it
/// covers the answers of the other middleware too.
struct CommonHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("X-Request-Id")!] = context.id
        return response
    }
}

/// Turns router errors (unknown path, a method a route does not take) into the JSON error form, with a fixed
/// detail: nothing of the request is echoed.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let answer: IngestResponse = switch error.status {
            case .notFound: .error(404, "not_found", "no such route")
            case .methodNotAllowed: .error(405, "method_not_allowed", "this route does not take this method")
            default: .error(Int(error.status.code), "bad_request", "the request was not understood")
            }
            context.logger.debug("router error", metadata: ["status": "\(error.status.code)"])
            return jsonResponse(answer)
        }
    }
}

/// An HTTP response for an answer of the request core.
func jsonResponse(_ answer: IngestResponse, headers extra: HTTPFields = [:]) -> Response {
    var headers: HTTPFields = [.contentType: "application/json"]
    headers.append(contentsOf: extra)
    if let seconds = answer.retryAfter { headers[.retryAfter] = String(seconds) }
    if answer.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
    return Response(status: .init(code: answer.status), headers: headers,
                    body: .init(byteBuffer: ByteBuffer(string: answer.body)))
}

/// Logs what a client is not told: the full error behind an answer's fixed detail, under the request's id.
func logAnswer(_ answer: IngestResponse, context: some RequestContext) {
    if let detail = answer.logDetail {
        context.logger.error("answered \(answer.status)", metadata: ["error": "\(redactingSecrets(detail))"])
    } else if answer.status >= 400 {
        context.logger.debug("answered \(answer.status)", metadata: ["answer": "\(answer.body.prefix(256))"])
    }
}
