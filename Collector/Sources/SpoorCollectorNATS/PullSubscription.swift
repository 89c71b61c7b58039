import CNats
import SpoorCollectorCore
import SpoorSystem

/// A message fetched from the stream: its bytes, headers we read, and the handle to acknowledge it with.
///
/// Unchecked: it owns the C client's message (destroyed once, by ``PullSubscription/settle(_:)``), which is only
/// read until then.
final class FetchedMessage: @unchecked Sendable {
    fileprivate var handle: OpaquePointer?
    /// The body: one batch frame.
    let data: [UInt8]
    /// The `Spoor-Received-At` header: when the collector received the batch, epoch milliseconds.
    let receivedAt: Int64?

    fileprivate init(_ handle: OpaquePointer) {
        self.handle = handle
        let length = Int(natsMsg_GetDataLength(handle))
        if length > 0, let bytes = natsMsg_GetData(handle) {
            data = bytes.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
        } else {
            data = []
        }
        var value: UnsafePointer<CChar>?
        receivedAt = natsMsgHeader_Get(handle, JetStreamStore.receivedAtHeader, &value) == NATS_OK
            ? value.flatMap { Int64(String(cString: $0)) } : nil
    }

    deinit { natsMsg_Destroy(handle) }
}

/// What to tell the stream about a fetched message.
enum Settlement {
    /// Committed (or found already stored): the stream may forget it for this consumer.
    case ack
    /// Never storable (not a valid frame): the stream must not redeliver it.
    case terminate
}

/// A pull subscription through a durable consumer, with explicit acknowledgement.
///
/// Unchecked: the C client's subscription handle is safe to use from any thread; fetches run on the client's
/// blocking queue one at a time (the drain's loop awaits each).
final class PullSubscription: @unchecked Sendable {
    private let subscription: OpaquePointer
    private let client: NATSClient
    private let durable: String

    init(_ subscription: OpaquePointer, durable: String, client: NATSClient) {
        self.subscription = subscription
        self.durable = durable
        self.client = client
    }

    deinit { natsSubscription_Destroy(subscription) }

    /// Up to `count` messages and `maxBytes` bytes (the server stops at whichever comes first), waiting at most
    /// `wait` for the first; empty when none came. `count` fits an `Int32` (the drain's `--batch` is at most 10,000).
    func fetch(_ count: Int, maxBytes: Int, wait: Duration) async throws(StoreUnavailable) -> [FetchedMessage] {
        try await client.onBlockingQueue { [self] () throws(StoreUnavailable) -> [FetchedMessage] in
            var list = natsMsgList()
            var request = jsFetchRequest()
            jsFetchRequest_Init(&request)
            request.Batch = Int32(clamping: count)
            request.MaxBytes = Int64(maxBytes)
            request.Expires = wait.nanoseconds
            let status = natsSubscription_FetchRequest(&list, subscription, &request)
            guard status == NATS_OK else {
                natsMsgList_Destroy(&list)
                if status == NATS_TIMEOUT { return [] }
                throw NATSClient.error(status, "fetching")
            }
            var messages: [FetchedMessage] = []
            for index in 0..<Int(list.Count) {
                guard let handle = list.Msgs[index] else { continue }
                messages.append(FetchedMessage(handle))
                list.Msgs[index] = nil  // owned by the FetchedMessage now
            }
            natsMsgList_Destroy(&list)
            return messages
        }
    }

    /// Acknowledges or terminates `message`; an acknowledgement that is lost only means a redelivery, which the
    /// store answers as a duplicate.
    func settle(_ message: FetchedMessage, _ settlement: Settlement) {
        switch settlement {
        case .ack: _ = natsMsg_Ack(message.handle, nil)
        case .terminate: _ = natsMsg_Term(message.handle, nil)
        }
    }

    /// Messages of the stream not yet delivered to the consumer, and delivered but not acknowledged.
    func backlog() async throws(StoreUnavailable) -> (pending: UInt64, unacknowledged: Int64) {
        try await client.onBlockingQueue { [self] () throws(StoreUnavailable) in
            var info: UnsafeMutablePointer<jsConsumerInfo>?
            var code = jsErrCode(rawValue: 0)
            // By name: the subscription's own lookup refuses a consumer it bound to rather than created.
            let status = js_GetConsumerInfo(&info, client.jetStream, client.location.stream, durable, nil, &code)
            defer { jsConsumerInfo_Destroy(info) }
            guard status == NATS_OK, let info else { throw NATSClient.error(status, "reading the consumer", code: code) }
            return (info.pointee.NumPending, info.pointee.NumAckPending)
        }
    }
}
