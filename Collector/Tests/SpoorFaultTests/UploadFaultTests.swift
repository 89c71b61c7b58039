import Foundation
import SpoorTesting
import SpoorModel
import SpoorFaultProxy
import SpoorWire
import SpoorTracker
import SpoorLog
import SpoorLoopback
import Testing

/// The uploader's answer to each fault, through the fault proxy: a real tracker, a real collector, one fault at a
/// time. Transient faults are retried with backoff (honouring `Retry-After`), a 400 sets the batch aside, a 401
/// pauses uploads, a 413 splits the batch, a stall ends at the request timeout. Each ends with every accepted event
/// stored exactly once (or set aside in `rejected/` and counted), the requests counted, and `track` never held up
/// by a hanging request. Time is the manual upload clock's, but for the two tests named "on real time", which judge
/// what happened (a timeout counted, a request that was answered), never how fast.
@Suite("Uploads through faults, against a real collector", .timeLimit(.minutes(10)))
struct UploadFaultTests {
    /// A fault the uploader must retry, and how it shows in the proxy's script.
    struct Transient: Sendable, CustomStringConvertible {
        var name: String
        var action: @Sendable (ManualClock) -> FaultAction
        /// The collector stored the first attempt (the client never heard).
        var storedFirst = false
        /// `Retry-After`: a flush during the pause sends nothing.
        var pauses = false
        /// The request hangs: the uploader's own timeout must end it.
        var stalls = false
        var description: String { name }
    }

    static let transients: [Transient] = [
        Transient(name: "500") { _ in .respond(status: 500) },
        Transient(name: "503 + Retry-After seconds", action: { _ in .respond(status: 503, headers: ["Retry-After": "2"]) }, pauses: true),
        Transient(name: "503 + Retry-After date", action: { clock in
            .respond(status: 503, headers: ["Retry-After": httpDate(after: 3, on: clock)])
        }, pauses: true),
        Transient(name: "429 + Retry-After", action: { _ in .respond(status: 429, headers: ["Retry-After": "1"]) }, pauses: true),
        Transient(name: "408") { _ in .respond(status: 408) },
        Transient(name: "connection reset mid-body") { _ in .resetMidBody },
        // An hour: only the uploader's own timeout (on the manual clock) can end it while the test looks.
        Transient(name: "stall", action: { _ in .stall(.seconds(3600)) }, stalls: true),
        Transient(name: "lost response", action: { _ in .loseResponse }, storedFirst: true),
    ]

    @Test("a transient fault: kept, retried once after the backoff with Spoor-Retry-Count, stored exactly once",
          arguments: transients)
    func transientFault(_ fault: Transient) async throws {
        let rig = try await UploadRig(script: FaultScript())
        rig.proxy.setScript(FaultScript([fault.action(rig.clock)]))
        await rig.track(60)

        // The first attempt meets the fault.
        let first: FlushResult
        if fault.stalls {
            let tracker = rig.tracker
            // The flush's own timeout (on the same clock) outlasts the step below, so it is the request's timeout
            // that ends the attempt and the flush reports what followed.
            async let flushing = tracker.flush(timeout: .seconds(3600))
            _ = try await rig.proxy.waitForRequests(1)
            // Asleep on the clock, not only asked for: a step between the two would not wake it.
            #expect(await rig.clock.sleeper(exactly: UploadRig.requestTimeout))
            // While the upload hangs (until the clock moves, which the test does after), the app goes on tracking.
            await rig.track(40)
            // Stored before the clock moves: the step passes the flush interval too, and the batch it seals must
            // take all 40, not the part the writer had reached (two batches then, and a fourth request).
            #expect(await rig.tracker.stored())
            rig.clock.advance(by: UploadRig.requestTimeout)
            first = await flushing
            #expect(rig.upload.timeouts == 1)
        } else {
            first = await rig.tracker.flush()
            await rig.track(40)
        }
        // The flush waited for what was tracked before it: the 60. The 40 tracked while it hung went in one batch when
        // the clock passed the flush interval; whether that batch was answered before the timeout answered the
        // flush is a race the flush does not wait for, so they count as pending or not.
        let pendingRange = fault.stalls ? 60...100 : 60...60
        #expect(first.deliveredBatches == 0 && pendingRange.contains(first.pendingEvents), "\(first) \(rig.proxy.requests)")
        #expect(first.pendingReason != nil)
        // While the first batch hung, the flush interval may have sealed the 40 and sent them beside it (several
        // batches go at once); they wait in the outbox behind the first, stored but not yet released.
        let storedFirst = try rig.storedExactlyOnce()
        #expect(storedFirst == (fault.storedFirst ? 60 : 0) || (fault.stalls && storedFirst == 40), "\(storedFirst)")

        if fault.pauses {
            // Retry-After pauses the whole uploader: a flush now sends nothing.
            let during = await rig.tracker.flush()
            guard case .pausedByServer = during.pendingReason else {
                Issue.record("a flush during Retry-After: \(during)")
                return
            }
            #expect(rig.proxy.requests.count == 1)
            #expect(rig.upload.serverPauses == 1)
        }

        // Past any backoff or pause: the uploader retries on its own, and sends the other batch (which may have
        // gone while the first hung: several batches are in flight at once).
        rig.clock.advance(by: .seconds(600))
        let requests = try await rig.proxy.waitForRequests(3)
        let retried = requests.filter { $0.batchID == requests[0].batchID }
        #expect(retried.map(\.retryCount) == [nil, 1], "\(requests)")

        let last = await rig.tracker.flush()
        #expect(last.isComplete, "\(last)")
        #expect(try rig.storedExactlyOnce() == 100)
        #expect(rig.tracker.counters.accepted == 100)
        // No busy loop: the faulted batch went twice, the other batch once.
        #expect(rig.proxy.requests.count == 3, "\(rig.proxy.requests)")
        #expect(rig.upload.retries == 1)
        if fault.storedFirst { #expect(rig.upload.duplicateBatches == 1) }
        await rig.close()
    }

    @Test("400: the batch is set aside in rejected/ and counted, never retried; later batches go on")
    func badRequest() async throws {
        let rig = try await UploadRig(script: FaultScript([.respond(status: 400)]))
        await rig.track(60)
        let first = await rig.tracker.flush()
        #expect(first.rejectedBatches == 1 && first.pendingEvents == 0, "\(first)")
        await rig.track(40)
        let second = await rig.tracker.flush()
        #expect(second.isComplete && second.deliveredEvents == 40, "\(second)")
        #expect(try rig.storedExactlyOnce() == 40)
        let rejected = rig.rejected
        #expect(rejected.entries.map(\.status) == [400])
        #expect(try rejectedEvents(rig) == 60, "the rejected batch holds the 60 events the store does not")
        #expect(rig.upload.rejectedBatches == 1 && rig.upload.rejectedEvents == 60)
        #expect(rig.proxy.requests.count == 2)
        await rig.close()
    }

    @Test("401: uploads pause, logged and counted once, until flush() resumes them; nothing is lost")
    func unauthorized() async throws {
        let rig = try await UploadRig(script: FaultScript([.respond(status: 401)]))
        await rig.track(60)
        let first = await rig.tracker.flush()
        #expect(first.pendingReason == .authorizationRejected(status: 401), "\(first) \(rig.proxy.requests)")
        #expect(rig.upload.authorizationPauses == 1)
        #expect(try rig.storedExactlyOnce() == 0)
        await rig.track(40)
        let second = await rig.tracker.flush()
        #expect(second.isComplete, "\(second)")
        #expect(try rig.storedExactlyOnce() == 100)
        // The refused batch once more, then the new one: no retries in between.
        let requests = rig.proxy.requests
        #expect(requests.count == 3, "\(requests)")
        // The two go at once (several batches are in flight), in either order at the proxy.
        #expect(requests.filter { $0.batchID == requests[0].batchID }.count == 2 && Set(requests.map(\.batchID)).count == 2)
        #expect(rig.upload.authorizationPauses == 1 && rig.upload.retries == 0)
        await rig.close()
    }

    @Test("413 above a size: batches are split in halves until they fit; a single event too large is set aside")
    func tooLarge() async throws {
        // Random hex makes the events hard to compress, so the frame size follows the event count.
        var random = SplitMix64(seed: 413)
        func blob(_ characters: Int) -> PropertyValue {
            .string(String((0..<characters).map { _ in "0123456789abcdef".randomElement(using: &random)! }))
        }
        let rig = try await UploadRig(script: FaultScript(rejectBodiesAbove: 3_000))
        for index in 0..<64 {
            await rig.track(1, properties: ["blob": blob(index == 20 ? 8_000 : 150)])
        }
        let result = await rig.tracker.flush()
        #expect(result.isComplete, "\(result)")
        #expect(try rig.storedExactlyOnce() == 63)
        #expect(rig.rejected.entries.map(\.status) == [413])
        #expect(try rejectedEvents(rig) == 1)
        #expect(rig.upload.splits >= 2)
        let requests = rig.proxy.requests
        #expect(requests.filter { $0.action == .forward }.allSatisfy { $0.bodyBytes <= 3_000 })
        // Every split halves: at most two requests per level of a 64-event batch, per branch that is too big.
        #expect(requests.count <= 30, "\(requests.count) requests")
        // Halves carry ids derived from the parent's, all different.
        let delivered = requests.filter { $0.upstreamStatus == 200 }.compactMap(\.batchID)
        #expect(Set(delivered).count == delivered.count)
        await rig.close()
    }

    @Test("automatic retries come within the backoff ceilings (1 s, then 2 s), each with its retry count")
    func backoffSpacing() async throws {
        let rig = try await UploadRig(script: FaultScript([.respond(status: 500), .respond(status: 500)]))
        await rig.track(10)
        _ = await rig.tracker.flush()
        // The second attempt is due within the first backoff's ceiling (1 s, full jitter).
        let mark = rig.clock.sleepCount
        rig.clock.advance(by: .seconds(1))
        _ = try await rig.proxy.waitForRequests(2)
        // The third within the second's (2 s): once the uploader sleeps its backoff (not a request timeout).
        #expect(await rig.clock.sleepRequested(after: mark) { $0 > .zero && $0 <= .seconds(2) })
        // Asleep, not only asked for, before the clock moves.
        #expect(await rig.clock.sleeper(within: .seconds(2)))
        rig.clock.advance(by: .seconds(2))
        let three = try await rig.proxy.waitForRequests(3)
        #expect(three.map(\.retryCount) == [nil, 1, 2])
        #expect(three.map(\.upstreamStatus) == [nil, nil, 200])
        let result = await rig.tracker.flush()
        #expect(result.isComplete)
        #expect(try rig.storedExactlyOnce() == 10)
        #expect(rig.proxy.requests.count == 3)
        await rig.close()
    }

    @Test("on real time, a stall that never ends holds neither flush() nor shutdown(): the 500 ms request timeout ends it")
    func realStall() async throws {
        // The stall lasts an hour, far past any wait here: only the uploader's own timer can end the request while
        // the test looks, so a flush that returns with a counted timeout was ended by it, however loaded the machine.
        let rig = try await UploadRig(script: FaultScript([.stall(.seconds(3600))]), systemClock: true,
                                      requestTimeout: .milliseconds(500))
        await rig.track(20)
        let started = ContinuousClock.now
        let result = await rig.tracker.flush(timeout: waitBound)
        let flushTook = ContinuousClock.now - started
        #expect(result.pendingEvents == 20 && result.pendingReason != nil, "\(result)")
        #expect(rig.upload.timeouts == 1, "the request timeout ended the request: \(rig.upload)")
        #expect(flushTook >= .milliseconds(500), "flush took \(flushTook), less than the request timeout")
        // The stalled batch is still kept: a new launch would send it. Shutdown does not wait for the network, nor
        // for the retry an hour away.
        #expect(await rig.tracker.shutdown(timeout: waitBound))
        #expect(try rig.storedExactlyOnce() == 0)
        #expect(rig.proxy.requests.count == 1)
        await rig.close()
    }

    @Test("on real time, a sub-second request timeout lets a prompt answer through, and never fires before its time")
    func subSecondTimeout() async throws {
        // FoundationNetworking counts request timeouts in whole seconds; 900 ms once meant an instant timeout.
        let timeout = Duration.milliseconds(900)
        let rig = try await UploadRig(script: FaultScript(), systemClock: true, requestTimeout: timeout)
        await rig.track(20)
        // A loaded machine may hold an attempt past 900 ms; then its timeout is counted, and the attempt must have
        // lasted the whole 900 ms. The next flush sends the batch again at once (the backoff is cut short).
        var result: FlushResult
        var flushes = 0
        repeat {
            let timeouts = rig.upload.timeouts
            let started = ContinuousClock.now
            result = await rig.tracker.flush(timeout: waitBound)
            let took = ContinuousClock.now - started
            flushes += 1
            if rig.upload.timeouts > timeouts { #expect(took >= timeout, "a timeout after \(took)") }
        } while !result.isComplete && flushes < 30
        #expect(result.isComplete, "\(result) after \(flushes) flushes")
        #expect(rig.upload.deliveredEvents == 20)
        #expect(rig.upload.timeouts == flushes - 1, "every flush but the last ended in a timeout: \(rig.upload)")
        #expect(try rig.storedExactlyOnce() == 20)
        await rig.close()
    }

    /// The events in the rejected area's frames.
    private func rejectedEvents(_ rig: UploadRig) throws -> Int {
        let folder = Tracker.logDirectory(in: rig.storage).appendingPathComponent(RejectedArea.folderName)
        var count = 0
        for entry in rig.rejected.entries {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(entry.file)))
            count += try EventDecoder().decodeBatch(FrameDecoder().decode(bytes).payload).count
        }
        return count
    }
}

/// An HTTP date (`Retry-After`'s second form) `seconds` after `clock`'s wall time.
private func httpDate(after seconds: Int, on clock: ManualClock) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: Date(timeIntervalSince1970: Double(clock.wallMilliseconds()) / 1000 + Double(seconds)))
}
