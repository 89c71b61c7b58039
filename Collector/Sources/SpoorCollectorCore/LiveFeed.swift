import SpoorSystem
import SpoorWire

/// The newest events this collector stored, and the numbers the live events page draws, kept in memory.
///
/// The server records each batch right after its store committed it, so the feed is what this process stored,
/// whatever the store: no store-specific query is involved. Everything is bounded: at most ``capacity`` events and
/// ``maxBytes`` bytes of their text (the oldest leave first), an event whose text is over ``maxEventBytes`` kept
/// as a stub without its `lib` and `properties`, one counter per second for the last ``rateSeconds`` seconds, and
/// counts for at most ``maxNames`` event names.
///
/// Each event gets a *position*, 1, 2, 3… in the order stored; a reader asks for the events after the last
/// position it saw. Positions start again at 1 when the collector restarts, and ``id`` changes then, so a reader
/// that sees a new id starts over.
public final class LiveFeed: Sendable {
    /// The most events kept.
    public let capacity: Int
    /// The most bytes of event text kept, all events together.
    public let maxBytes: Int
    /// The most bytes of text one event keeps whole; a larger one is kept as a stub.
    public let maxEventBytes: Int
    /// This feed's id: random, new each time the collector starts.
    public let id: String

    /// Seconds of history in the per-second counts.
    public static let rateSeconds = 600
    /// Event names counted one by one; events with names past these are counted as unlisted.
    public static let maxNames = 1000
    /// Names in a read, the most frequent first.
    public static let topNames = 25
    /// Bytes kept of each text field of a stub.
    static let stubFieldBytes = 256

    private let state: Locked<State>

    private struct State {
        /// A ring of up to `capacity` slots; the live ones are `start..<start+count`, modulo `capacity`.
        var ring: [LiveEvent?] = []
        var start = 0
        var count = 0
        var bytes = 0
        /// The position the next event gets.
        var next: UInt64 = 1
        /// Slot `second % rateSeconds` counts the events received in `second`, if it is that second's.
        var perSecond = [(second: Int64, count: Int)](repeating: (Int64.min, 0), count: LiveFeed.rateSeconds)
        var names: [String: Int] = [:]
        var unlistedEvents = 0
    }

    /// Creates an empty feed.
    ///
    /// - Parameters:
    ///   - capacity: the most events kept (at least 1).
    ///   - maxBytes: the most bytes of event text kept, all events together.
    ///   - maxEventBytes: the most bytes one event keeps whole (at least 4 KiB, so that a stub always fits).
    public init(capacity: Int = 1000, maxBytes: Int = 16 << 20, maxEventBytes: Int = 64 << 10) {
        precondition(capacity > 0 && maxEventBytes >= 4096 && maxBytes >= maxEventBytes, "LiveFeed bounds")
        self.capacity = capacity
        self.maxBytes = maxBytes
        self.maxEventBytes = maxEventBytes
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        id = String(repeating: "0", count: 16 - digits.count) + digits
        state = Locked(State())
    }

    /// Adds the events of a batch the store has just committed (not a duplicate: nothing was stored then).
    public func record(_ batch: BatchRecord) {
        guard batch.rows.count > 0 else { return }
        // Only the newest `capacity` events can stay; earlier ones of a big batch are counted, not kept. Rows become
        // strings (and sizes, stubs) before taking the lock, so the lock covers bookkeeping only.
        let kept = max(0, batch.rows.count - capacity)..<batch.rows.count
        let entries = kept.map { index in
            LiveEvent(position: 0, batchID: batch.batchID, receivedAt: batch.receivedAt, row: batch.rows.row(index), limit: maxEventBytes)
        }
        let skipped = (0..<kept.lowerBound).map { batch.rows.text.string(batch.rows.rows[$0].name) }
        state.withLock { state in
            // The events a big batch had before the kept ones still take their positions, so a page sees the gap.
            state.next += UInt64(skipped.count)
            for var entry in entries {
                entry.position = state.next
                state.next += 1
                if state.count == capacity { Self.dropOldest(&state, capacity: capacity) }
                while state.count > 0, state.bytes + entry.bytes > maxBytes { Self.dropOldest(&state, capacity: capacity) }
                if state.ring.count < capacity {
                    // Not wrapped yet: the live slots end at the array's end.
                    state.ring.append(entry)
                } else {
                    state.ring[(state.start + state.count) % capacity] = entry
                }
                state.count += 1
                state.bytes += entry.bytes
                if state.names[entry.row.name] != nil || state.names.count < Self.maxNames {
                    state.names[entry.row.name, default: 0] += 1
                } else {
                    state.unlistedEvents += 1
                }
            }
            for name in skipped {
                if state.names[name] != nil || state.names.count < Self.maxNames {
                    state.names[name, default: 0] += 1
                } else {
                    state.unlistedEvents += 1
                }
            }
            let second = Self.floorDiv(batch.receivedAt, 1000)
            let slot = Int(second - Self.floorDiv(second, Int64(Self.rateSeconds)) * Int64(Self.rateSeconds))
            if state.perSecond[slot].second < second {
                state.perSecond[slot] = (second, 0)
            }
            // A batch stamped before the slot's second (the wall clock stepped back) is older than the window.
            if state.perSecond[slot].second == second {
                state.perSecond[slot].count += batch.rows.count
            }
        }
    }

    private static func dropOldest(_ state: inout State, capacity: Int) {
        state.bytes -= state.ring[state.start]?.bytes ?? 0
        state.ring[state.start] = nil
        state.start = (state.start + 1) % capacity
        state.count -= 1
    }

    /// The position of the newest event stored, 0 before any.
    public var latest: UInt64 { state.withLock { $0.next - 1 } }

    /// The newest `limit` events after position `after` (oldest of them first), and the numbers at `now`
    /// (epoch milliseconds): events per second for the ``rateSeconds`` seconds up to `now`, and counts by name.
    public func read(after: UInt64, limit: Int, now: Int64) -> LiveRead {
        let nowSecond = Self.floorDiv(now, 1000)
        let (events, latest, names, unlisted, rate) = state.withLock { state in
            let latest = state.next - 1
            let oldest = latest - UInt64(state.count) + 1
            // The last position not to return; `after` may be anything up to 2^64 - 1, so nothing is added to it.
            let lastSkipped = max(after, oldest - 1, latest - min(latest, UInt64(max(limit, 0))))
            var events: [LiveEvent] = []
            if lastSkipped < latest {
                let first = lastSkipped + 1
                events.reserveCapacity(Int(latest - first + 1))
                for position in first...latest {
                    events.append(state.ring[(state.start + Int(position - oldest)) % capacity]!)
                }
            }
            let rate = (0..<Self.rateSeconds).map { index -> Int in
                let second = nowSecond - Int64(Self.rateSeconds - 1 - index)
                let slot = state.perSecond[Int(second - Self.floorDiv(second, Int64(Self.rateSeconds)) * Int64(Self.rateSeconds))]
                return slot.second == second ? slot.count : 0
            }
            return (events, latest, state.names, state.unlistedEvents, rate)
        }
        let top = names.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(Self.topNames)
        return LiveRead(
            feedID: id, latest: latest, events: events,
            skipped: after < latest ? Int(clamping: latest - after) - events.count : 0,
            now: now, rate: rate, names: top.map { ($0.key, $0.value) }, distinctNames: names.count,
            unlistedEvents: unlisted
        )
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}

/// One event of a ``LiveFeed``: the row as stored, with its batch.
public struct LiveEvent: Sendable, Hashable {
    /// Its position in the feed: 1 for the first event the collector stored since it started.
    public var position: UInt64
    /// The batch id, 32 hex digits.
    public var batchID: String
    /// When the collector received the batch, epoch milliseconds.
    public var receivedAt: Int64
    /// The row as stored; for a stub, its text fields are cut and `lib` and `properties` are `{}`.
    public var row: EventRow
    /// For a stub, the bytes of text the event had; 0 for an event kept whole.
    public var omittedBytes: Int

    /// The bytes of text this event holds, as the feed counts them against ``LiveFeed/maxBytes``.
    public var bytes: Int {
        var total = 128 + batchID.utf8.count + row.name.utf8.count + row.type.utf8.count
        total += row.distinctID.utf8.count + row.anonymousID.utf8.count + (row.loginID?.utf8.count ?? 0)
        total += (row.sessionID?.utf8.count ?? 0) + row.trackID.utf8.count + row.lib.utf8.count + row.properties.utf8.count
        return total
    }

    /// The event for `row`, as a stub when its text is over `limit` bytes.
    init(position: UInt64, batchID: String, receivedAt: Int64, row: EventRow, limit: Int) {
        self.position = position
        self.batchID = batchID
        self.receivedAt = receivedAt
        self.row = row
        omittedBytes = 0
        let size = bytes
        guard size > limit else { return }
        omittedBytes = size
        let cut = { (text: String) in Self.prefix(text, bytes: LiveFeed.stubFieldBytes) }
        self.row.name = cut(row.name)
        self.row.type = cut(row.type)
        self.row.distinctID = cut(row.distinctID)
        self.row.anonymousID = cut(row.anonymousID)
        self.row.loginID = row.loginID.map(cut)
        self.row.sessionID = row.sessionID.map(cut)
        self.row.trackID = cut(row.trackID)
        self.row.lib = "{}"
        self.row.properties = "{}"
    }

    /// The longest prefix of `text` of whole Unicode scalars within `bytes` UTF-8 bytes.
    static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var end = text.unicodeScalars.startIndex
        var used = 0
        for index in text.unicodeScalars.indices {
            let width = text.unicodeScalars[index].utf8.count
            guard used + width <= bytes else { break }
            used += width
            end = text.unicodeScalars.index(after: index)
        }
        return String(text.unicodeScalars[..<end])
    }
}

/// What a reader of a ``LiveFeed`` gets: events after its position, and the numbers around them.
public struct LiveRead: Sendable {
    /// The feed's id; a new one means the collector restarted and positions began again.
    public var feedID: String
    /// The position of the newest event stored, 0 before any.
    public var latest: UInt64
    /// The events, oldest first.
    public var events: [LiveEvent]
    /// Events after the reader's position not returned: gone from the feed already, or past the limit.
    public var skipped: Int
    /// When the numbers were taken, epoch milliseconds.
    public var now: Int64
    /// Events received per second, oldest first; the last entry is the second of ``now``.
    public var rate: [Int]
    /// Event counts by name since the collector started, the most frequent first (at most ``LiveFeed/topNames``).
    public var names: [(name: String, count: Int)]
    /// How many names have a count (at most ``LiveFeed/maxNames``).
    public var distinctNames: Int
    /// Events whose name came after ``LiveFeed/maxNames`` others and is not counted by itself.
    public var unlistedEvents: Int

    /// The most bytes of events one answer holds: the newest events that fit, the older ones counted as skipped.
    public static let maxEventBytes = 2 << 20

    /// The JSON answer of `GET /v1/events/recent`, with the collector's own counters: at most ``maxEventBytes`` of
    /// events (the newest; the others are counted in `skipped`).
    public func json(counters: LiveCounters) -> String {
        // Newest first until the cap, then written oldest first.
        var written: [[UInt8]] = []
        var eventBytes = 0
        for event in events.reversed() {
            var one = FeedJSON(capacity: 1024)
            one.event(event)
            guard eventBytes + one.bytes.count <= Self.maxEventBytes else { break }
            eventBytes += one.bytes.count + 1
            written.append(one.bytes)
        }
        var out = FeedJSON(capacity: 8192 + eventBytes)
        out.raw(#"{"feed":"#)
        out.string(feedID)
        out.raw(#","latest":"#)
        out.raw(String(latest))
        out.raw(#","skipped":"#)
        out.raw(String(skipped + events.count - written.count))
        out.raw(#","events":["#)
        for (index, event) in written.reversed().enumerated() {
            if index > 0 { out.raw(",") }
            out.bytes.append(contentsOf: event)
        }
        out.raw(#"],"stats":{"now_ms":"#)
        out.raw(String(now))
        out.raw(#","rate":{"end_s":"#)
        out.raw(String(LiveFeed.floorDiv(now, 1000)))
        out.raw(#","counts":["#)
        out.raw(rate.map(String.init).joined(separator: ","))
        out.raw(#"]},"names":["#)
        for (index, entry) in names.enumerated() {
            out.raw(index > 0 ? #",{"name":"# : #"{"name":"#)
            out.string(entry.name)
            out.raw(#","count":"#)
            out.raw(String(entry.count))
            out.raw("}")
        }
        out.raw(#"],"distinct_names":"#)
        out.raw(String(distinctNames))
        out.raw(#","unlisted_events":"#)
        out.raw(String(unlistedEvents))
        out.raw(#","events_stored":"#)
        out.raw(String(counters.eventsStored))
        out.raw(#","duplicate_batches":"#)
        out.raw(String(counters.duplicateBatches))
        out.raw(#","refused_batches":"#)
        out.raw(String(counters.refusedBatches))
        out.raw("}}")
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

/// The feed's JSON answer, written as bytes: strings are quoted and escaped by SpoorWire's JSON, and the rows'
/// `lib` and `properties`, JSON text already, go in as they are.
struct FeedJSON {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func string(_ text: String) {
        raw(JSONValue.string(text).serialized)
    }

    /// One feed event: the stored row's columns (their names as in the schema), its batch, and its position.
    mutating func event(_ event: LiveEvent) {
        let row = event.row
        raw(#"{"position":"#)
        raw(String(event.position))
        raw(#","batch_id":"#)
        string(event.batchID)
        raw(#","received_at":"#)
        raw(String(event.receivedAt))
        raw(#","idx":"#)
        raw(String(row.idx))
        raw(#","name":"#)
        string(row.name)
        raw(#","type":"#)
        string(row.type)
        raw(#","time_ms":"#)
        raw(String(row.timeMs))
        raw(#","distinct_id":"#)
        string(row.distinctID)
        raw(#","anonymous_id":"#)
        string(row.anonymousID)
        raw(#","login_id":"#)
        if let login = row.loginID { string(login) } else { raw("null") }
        raw(#","session_id":"#)
        if let session = row.sessionID { string(session) } else { raw("null") }
        raw(#","track_id":"#)
        string(row.trackID)
        raw(#","sequence":"#)
        raw(String(UInt64(bitPattern: row.sequence)))
        // Both columns are JSON text already (written when the row was built).
        raw(#","lib":"#)
        raw(row.lib)
        raw(#","properties":"#)
        raw(row.properties)
        if event.omittedBytes > 0 {
            raw(#","omitted_bytes":"#)
            raw(String(event.omittedBytes))
        }
        raw("}")
    }
}

/// The collector's counters the live events page shows, read from the same registry as `GET /metrics`.
public struct LiveCounters: Sendable, Hashable {
    /// Events stored (`spoor_collector_events_stored_total`).
    public var eventsStored: Int
    /// Batches that were stored before (`spoor_collector_duplicate_batches_total`).
    public var duplicateBatches: Int
    /// Batch requests answered with anything but 200 (`spoor_collector_requests_total` by status).
    public var refusedBatches: Int

    /// Creates counters.
    public init(eventsStored: Int = 0, duplicateBatches: Int = 0, refusedBatches: Int = 0) {
        self.eventsStored = eventsStored
        self.duplicateBatches = duplicateBatches
        self.refusedBatches = refusedBatches
    }

    /// The counters in Prometheus text as `GET /metrics` serves it; a metric not there yet counts 0.
    public init(prometheusText text: String) {
        self.init()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            // `name{labels} value`; the value is the first field after the name and its labels.
            let nameEnd = line.firstIndex { $0 == "{" || $0 == " " } ?? line.endIndex
            let name = line[..<nameEnd]
            var rest = line[nameEnd...]
            var labels: Substring = ""
            if rest.first == "{", let close = rest.firstIndex(of: "}") {
                labels = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
            }
            guard let field = rest.split(separator: " ").first, let value = Double(field), value.isFinite else { continue }
            let count = Int(value.rounded())
            switch name {
            case "spoor_collector_events_stored_total": eventsStored += count
            case "spoor_collector_duplicate_batches_total": duplicateBatches += count
            case "spoor_collector_requests_total" where !labels.contains(#"status="200""#): refusedBatches += count
            default: break
            }
        }
    }
}

/// The query of `GET /v1/events/recent`: `after` (a position, default 0) and `limit` (1 to ``maxLimit``).
public struct LiveQuery: Sendable, Hashable {
    /// Events after this position.
    public var after: UInt64
    /// At most this many, the newest.
    public var limit: Int

    /// The largest `limit`.
    public static let maxLimit = 1000
    /// `limit` when not given.
    public static let defaultLimit = 500

    /// Creates a query.
    public init(after: UInt64 = 0, limit: Int = LiveQuery.defaultLimit) {
        self.after = after
        self.limit = limit
    }

    /// The query from the raw query string of the request (what follows `?`, percent-encoded), or a 400 answer:
    /// the string is longer than ``QueryString/maxBytes``, badly encoded, or a parameter is unknown, repeated or not
    /// a number in range.
    public static func parse(query: Substring) -> Result<LiveQuery, IngestResponse> {
        switch QueryString.parameters(query) {
        case .failure(let error): return .failure(.error(400, "bad_query", error.description))
        case .success(let parameters): return parse(parameters)
        }
    }

    /// The query from its parameters (names and percent-decoded values), or a 400 answer that names the one that
    /// is unknown, repeated or not a number in range.
    public static func parse(_ parameters: [(name: String, value: String)]) -> Result<LiveQuery, IngestResponse> {
        var query = LiveQuery()
        var seen: Set<String> = []
        for (name, value) in parameters {
            guard seen.insert(name).inserted else {
                return .failure(.error(400, "bad_query", "query parameter \(quoted(name)) is given more than once"))
            }
            switch name {
            case "after":
                guard value.utf8.count <= 20, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let after = UInt64(value) else {
                    return .failure(.error(400, "bad_query", "after must be a feed position, a whole number from 0, not \(quoted(value))"))
                }
                query.after = after
            case "limit":
                guard value.utf8.count <= 4, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let limit = Int(value),
                      (1...maxLimit).contains(limit) else {
                    return .failure(.error(400, "bad_query", "limit must be a whole number from 1 to \(maxLimit), not \(quoted(value))"))
                }
                query.limit = limit
            default:
                return .failure(.error(400, "bad_query", "unknown query parameter \(quoted(name)); the known ones are after and limit"))
            }
        }
        return .success(query)
    }

    /// `text` in quotes, cut to 64 characters: it came from the client.
    private static func quoted(_ text: String) -> String {
        text.count > 64 ? "\"\(text.prefix(64))…\"" : "\"\(text)\""
    }
}
