import CNats
import Dispatch
import Foundation
import SpoorCollectorCore
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a JetStream store is: `nats://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT…]/STREAM`, or `tls://…` for TLS.
public struct NATSLocation: Sendable, Hashable {
    /// The servers to connect to, as `nats://HOST:PORT` (or `tls://`); the client reconnects to any of them.
    public var servers: [String]
    /// The stream's name.
    public var stream: String
    /// Whether the connection must be TLS (`tls://`).
    public var tls: Bool
    /// The user name, or with no ``password`` the token, from the URL.
    public var user: String?
    /// The password, from the URL.
    public var password: String?
    /// The certificate authorities that sign the servers' certificates (PEM); nil for the system's.
    public var certificateAuthorities: String?
    /// A NATS credentials file (a user JWT and its NKey seed, `nsc`'s `.creds`).
    public var credentialsFile: String?

    /// The subject the stream's batches are published on.
    public var subject: String { "\(stream).batches" }
    /// The subject a drain publishes, to the same stream, the messages it cannot decode: kept (until the stream's
    /// age limit) for an operator to look at, never delivered to a drain's consumer, which reads ``subject`` only.
    public var deadLetterSubject: String { "\(stream).dead" }

    /// Parses `nats://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT…]/STREAM` (or `tls://…`), or nil.
    public init?(parsing text: String) {
        let scheme: String
        if text.hasPrefix("nats://") {
            scheme = "nats"
        } else if text.hasPrefix("tls://") {
            scheme = "tls"
        } else {
            return nil
        }
        var rest = text.dropFirst(scheme.count + 3)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        if let at = rest[..<slash].lastIndex(of: "@") {
            let userInfo = rest[..<at]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.flatMap({ String($0).removingPercentEncoding }), !name.isEmpty else { return nil }
            user = name
            password = parts.count == 2 ? String(parts[1]).removingPercentEncoding : nil
            rest = rest[rest.index(after: at)...]
        }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let hosts = rest[..<slash].split(separator: ",")
        let stream = String(rest[rest.index(after: slash)...])
        // A stream name is a NATS token: no dots, spaces or wildcards.
        guard !hosts.isEmpty, !stream.isEmpty,
              stream.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }),
              hosts.allSatisfy({ host in
                  guard let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]) else { return false }
                  return colon != host.startIndex && (1...65535).contains(port)
              })
        else { return nil }
        servers = hosts.map { "\(scheme)://\($0)" }
        self.stream = stream
        tls = scheme == "tls"
    }
}

/// How the collector creates its stream when it is missing.
public struct StreamSettings: Sendable, Hashable {
    /// Copies of each message on separate servers (1, 3 or 5).
    public var replicas: Int
    /// How long the stream remembers a batch id to refuse it again (`Nats-Msg-Id`).
    public var duplicateWindow: Duration
    /// How long the stream keeps a batch, drained or not.
    public var maxAge: Duration

    /// Creates settings: by default 3 replicas, a 24-hour duplicate window and a 7-day age limit.
    public init(replicas: Int = 3, duplicateWindow: Duration = .seconds(24 * 3600), maxAge: Duration = .seconds(7 * 24 * 3600)) {
        self.replicas = replicas
        self.duplicateWindow = duplicateWindow
        self.maxAge = maxAge
    }
}

/// What the stream said to a published batch.
struct PublishAck: Sendable {
    /// The stream already held a message with this `Nats-Msg-Id` within its duplicate window.
    var duplicate: Bool
}

/// A connection to a NATS cluster and its JetStream context, over the C client (`libnats`).
///
/// Unchecked: it holds the C client's handles, which the client documents as safe to use from any thread; the
/// acknowledgement waiters are behind a mutex. Calls that block (stream and consumer requests, fetches) run on a
/// dispatch queue of the client's, never on Swift's cooperative threads.
final class NATSClient: @unchecked Sendable {
    private let connection: OpaquePointer
    let jetStream: OpaquePointer
    private let waiters: AckWaiters
    private let closed = Locked(false)
    /// Where the blocking calls run.
    let blocking = DispatchQueue(label: "spoor.nats.blocking")
    let location: NATSLocation

    /// Connects to `location`'s servers; when none answers yet the client keeps trying in the background, so a
    /// collector starts while the cluster is down. `requestTimeout` bounds JetStream requests.
    init(_ location: NATSLocation, name: String, requestTimeout: Duration) throws(StoreUnavailable) {
        self.location = location
        var options: OpaquePointer?
        try Self.check(natsOptions_Create(&options), "options")
        defer { natsOptions_Destroy(options) }
        var servers = location.servers.map { strdup($0) }
        defer { servers.forEach { free($0) } }
        try servers.withUnsafeMutableBufferPointer { buffer throws(StoreUnavailable) in
            try buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { list throws(StoreUnavailable) in
                try Self.check(natsOptions_SetServers(options, list, Int32(buffer.count)), "servers")
            }
        }
        try Self.check(natsOptions_SetName(options, name), "name")
        if location.tls { try Self.check(natsOptions_SetSecure(options, true), "TLS") }
        if let authorities = location.certificateAuthorities {
            try Self.check(natsOptions_LoadCATrustedCertificates(options, authorities), "the certificate authorities \(authorities)")
        }
        switch (location.user, location.password) {
        case (let user?, let password?): try Self.check(natsOptions_SetUserInfo(options, user, password), "user and password")
        case (let token?, nil): try Self.check(natsOptions_SetToken(options, token), "token")
        default: break
        }
        if let credentials = location.credentialsFile {
            try Self.check(natsOptions_SetUserCredentialsFromFiles(options, credentials, nil), "the credentials file \(credentials)")
        }
        // Reconnect forever, quickly: a node killed or restarted is a matter of seconds.
        try Self.check(natsOptions_SetMaxReconnect(options, -1), "reconnects")
        try Self.check(natsOptions_SetReconnectWait(options, 100), "reconnect wait")
        // With a connected callback the first connection is retried in the background: a server that refuses the
        // credentials or the TLS handshake leaves the collector serving (503) instead of stuck before it listens.
        try Self.check(natsOptions_SetRetryOnFailedConnect(options, true, { _, _ in }, nil), "retry")
        // Requests in flight fail at once on a disconnect instead of at their timeout.
        try Self.check(natsOptions_SetFailRequestsOnDisconnect(options, true), "requests")
        var connection: OpaquePointer?
        let status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED, let connection else {
            throw Self.error(status, "connecting to \(location.servers.joined(separator: ","))")
        }
        let waiters = AckWaiters()
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = requestTimeout.milliseconds
        jsOptions.PublishAsync.AckHandler = ackHandler
        jsOptions.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(waiters).toOpaque()
        var jetStream: OpaquePointer?
        let made = natsConnection_JetStream(&jetStream, connection, &jsOptions)
        guard made == NATS_OK, let jetStream else {
            natsConnection_Destroy(connection)
            throw Self.error(made, "the JetStream context")
        }
        self.connection = connection
        self.jetStream = jetStream
        self.waiters = waiters
    }

    deinit { close() }

    /// Closes the connection; acknowledgements still awaited fail. Idempotent.
    func close() {
        let wasClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        natsConnection_Close(connection)
        jsCtx_Destroy(jetStream)
        natsConnection_Destroy(connection)
        waiters.failAll(StoreUnavailable("NATS: the connection is closed"))
    }

    /// The largest message the connected server takes, or 0 before a connection.
    var maxPayload: Int { closed.withLock { $0 ? 0 : Int(natsConnection_GetMaxPayload(connection)) } }

    /// Whether the client is connected to a server now.
    var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    // MARK: - Publishing

    /// Publishes `data` on `subject` with `Nats-Msg-Id` = `messageID` and `headers`, and returns the stream's
    /// acknowledgement; fails when none comes within `timeout`.
    func publish(
        subject: String, messageID: String, headers: [(String, String)], data: [UInt8], timeout: Duration
    ) async throws(StoreUnavailable) -> PublishAck {
        var message: OpaquePointer?
        let created = data.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { natsMsg_Create(&message, subject, nil, $0.baseAddress, Int32($0.count)) }
        }
        guard created == NATS_OK, let message else { throw Self.error(created, "a message") }
        for (name, value) in headers {
            let status = natsMsgHeader_Set(message, name, value)
            guard status == NATS_OK else {
                natsMsg_Destroy(message)
                throw Self.error(status, "a header")
            }
        }
        let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(message)))
        let result: Result<PublishAck, StoreUnavailable> = await withCheckedContinuation { continuation in
            // Registered before publishing: the acknowledgement may come on the client's thread before the call returns.
            waiters.add(key, continuation)
            var pending: OpaquePointer? = message
            var options = jsPubOptions()
            jsPubOptions_Init(&options)
            options.MaxWait = timeout.milliseconds
            let status = messageID.withCString { id in
                options.MsgId = id
                return js_PublishMsgAsync(jetStream, &pending, &options)
            }
            guard status != NATS_OK else { return }
            // Not published: the message is still ours, and no acknowledgement will come for it.
            natsMsg_Destroy(pending)
            waiters.resume(key, .failure(Self.error(status, "publishing")))
        }
        return try result.get()
    }

    // MARK: - Stream and consumer

    /// Creates the stream when it is missing; a stream that exists is used as it is.
    func ensureStream(_ settings: StreamSettings) async throws(StoreUnavailable) {
        try await onBlockingQueue { [self] () throws(StoreUnavailable) in
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(rawValue: 0)
            let found = js_GetStreamInfo(&info, jetStream, location.stream, nil, &code)
            jsStreamInfo_Destroy(info)
            if found == NATS_OK { return }
            guard found == NATS_NOT_FOUND || code == JSStreamNotFoundErr else {
                throw Self.error(found, "looking up stream \(location.stream)", code: code)
            }
            var config = jsStreamConfig()
            jsStreamConfig_Init(&config)
            let name = strdup(location.stream)
            let subject = strdup(location.subject)
            let deadLetters = strdup(location.deadLetterSubject)
            defer {
                free(name)
                free(subject)
                free(deadLetters)
            }
            var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(subject), UnsafePointer(deadLetters)]
            config.Name = UnsafePointer(name)
            config.Retention = js_LimitsPolicy
            config.Storage = js_FileStorage
            config.Replicas = Int64(settings.replicas)
            config.Duplicates = settings.duplicateWindow.nanoseconds
            config.MaxAge = settings.maxAge.nanoseconds
            let added = subjects.withUnsafeMutableBufferPointer { list in
                config.Subjects = list.baseAddress
                config.SubjectsLen = Int32(list.count)
                return js_AddStream(&info, jetStream, &config, nil, &code)
            }
            jsStreamInfo_Destroy(info)
            // Another collector may have created it meanwhile.
            guard added == NATS_OK || code == JSStreamNameExistErr else {
                throw Self.error(added, "creating stream \(location.stream)", code: code)
            }
        }
    }

    /// A pull subscription on the stream through the durable consumer `durable` (created when missing), whose
    /// messages are acknowledged one by one and redelivered when not acknowledged within `ackWait`.
    func pullSubscription(durable: String, ackWait: Duration) async throws(StoreUnavailable) -> PullSubscription {
        try await onBlockingQueue { [self] () throws(StoreUnavailable) -> PullSubscription in
            var options = jsSubOptions()
            jsSubOptions_Init(&options)
            let stream = strdup(location.stream)
            defer { free(stream) }
            options.Stream = UnsafePointer(stream)
            options.Config.AckPolicy = js_AckExplicit
            options.Config.AckWait = ackWait.nanoseconds
            options.Config.MaxAckPending = 65_536
            var subscription: OpaquePointer?
            var code = jsErrCode(rawValue: 0)
            let status = js_PullSubscribe(&subscription, jetStream, location.subject, durable, nil, &options, &code)
            guard status == NATS_OK, let subscription else {
                throw Self.error(status, "subscribing as \(durable)", code: code)
            }
            return PullSubscription(subscription, durable: durable, client: self)
        }
    }

    /// Runs a call that may block on the client's own queue.
    func onBlockingQueue<Value: Sendable>(
        _ work: @escaping @Sendable () throws(StoreUnavailable) -> Value
    ) async throws(StoreUnavailable) -> Value {
        let result: Result<Value, StoreUnavailable> = await withCheckedContinuation { continuation in
            blocking.async { continuation.resume(returning: Result(catching: work)) }
        }
        return try result.get()
    }

    // MARK: - Errors and units

    static func check(_ status: natsStatus, _ what: String) throws(StoreUnavailable) {
        guard status == NATS_OK else { throw error(status, what) }
    }

    static func error(_ status: natsStatus, _ what: String, code: jsErrCode = jsErrCode(rawValue: 0)) -> StoreUnavailable {
        var text = String(cString: natsStatus_GetText(status))
        if let last = nats_GetLastError(nil), last.pointee != 0 { text = String(cString: last) }
        let jetStreamCode = code.rawValue != 0 ? " (JetStream error \(code.rawValue))" : ""
        return StoreUnavailable("NATS: \(what): \(text)\(jetStreamCode)")
    }
}

/// The requests waiting for the stream's acknowledgement of their message, by the message's address.
final class AckWaiters: Sendable {
    private let waiting = Locked<[UInt: CheckedContinuation<Result<PublishAck, StoreUnavailable>, Never>]>([:])

    func add(_ key: UInt, _ continuation: CheckedContinuation<Result<PublishAck, StoreUnavailable>, Never>) {
        waiting.withLock { $0[key] = continuation }
    }

    /// Takes the waiter for `key` out; nil when it was answered already.
    func take(_ key: UInt) -> CheckedContinuation<Result<PublishAck, StoreUnavailable>, Never>? {
        waiting.withLock { $0.removeValue(forKey: key) }
    }

    func resume(_ key: UInt, _ result: Result<PublishAck, StoreUnavailable>) {
        take(key)?.resume(returning: result)
    }

    func failAll(_ error: StoreUnavailable) {
        let all = waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        for continuation in all { continuation.resume(returning: .failure(error)) }
    }
}

/// The C client's acknowledgement callback, on its delivery thread: hands the outcome to the waiting request.
private let ackHandler: jsPubAckHandler = { _, message, ack, failure, closure in
    guard let closure, let message else { return }
    let waiters = Unmanaged<AckWaiters>.fromOpaque(closure).takeUnretainedValue()
    // Taken before the message is destroyed: a new message may get its address as soon as it is freed.
    let waiter = waiters.take(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(message))))
    natsMsg_Destroy(message)
    let result: Result<PublishAck, StoreUnavailable>
    if let ack {
        result = .success(PublishAck(duplicate: ack.pointee.Duplicate))
    } else if let failure {
        let text = failure.pointee.ErrText.map { String(cString: $0) } ?? String(cString: natsStatus_GetText(failure.pointee.Err))
        result = .failure(StoreUnavailable("NATS: no acknowledgement from the stream: \(text)"))
    } else {
        result = .failure(StoreUnavailable("NATS: no acknowledgement from the stream"))
    }
    waiter?.resume(returning: result)
}
