import SpoorModel
package import SpoorWire

extension BatchID {
    /// The id of part `index` of this batch when it is split (after a 413): a fixed function of this id and
    /// `index`, so a split redone after a crash gives the same ids and the collector stores nothing twice.
    ///
    /// The bits are a SplitMix64-style mix of both halves of the parent id and the index, laid out as a
    /// version 4 UUID like random ids.
    package func derived(index: Int) -> BatchID {
        func mix(_ value: UInt64) -> UInt64 { SplitMix64.mix(value &+ SplitMix64.increment) }
        let salt = mix(UInt64(truncatingIfNeeded: index) &+ 1)
        let high = mix(bytes.0 ^ mix(bytes.1 ^ salt))
        let low = mix(bytes.1 ^ mix(high ^ salt))
        return BatchID(high: (high & ~0xF000) | 0x4000, low: (low & ~(UInt64(0xC) << 60)) | (UInt64(0x8) << 60))
    }
}

/// Cuts a batch frame in two for a 413. What a payload holds, and how it splits, is the business of SpoorWire's
/// `BatchPayload`: the halves carry the parent's contexts and events byte for byte.
package enum BatchSplit {
    /// The two halves of `frame`: the first `count / 2` events, then the rest, each behind the parent's contexts and
    /// sealed with the parent's codec and seal time and the id ``SpoorWire/BatchID/derived(index:)`` of the parent's.
    /// Nil when the frame holds a single event (it cannot be split).
    ///
    /// - Throws: ``/SpoorWire/FrameError`` when the frame or its events cannot be decoded.
    package static func halves(of frame: [UInt8]) throws(FrameError) -> [[UInt8]]? {
        let decoded = try FrameDecoder(limits: FrameLimits(maxFrameBytes: .max, maxUncompressedBytes: 1 << 30, maxRecords: 1 << 20))
            .decode(frame)
        // Only events that decode are sent again: a batch that does not is set aside whole.
        do {
            _ = try EventDecoder(limits: DecodeLimits(maxEventBytes: 16 << 20, maxProperties: 1 << 20, maxStringBytes: 16 << 20,
                                                      maxListLength: 1 << 20))
                .decodeBatch(decoded.payload)
        } catch {
            throw FrameError(.malformedPayload, field: "payload", reason: "the batch's events cannot be decoded to split it: \(error)")
        }
        guard let (first, second) = try BatchPayload(decoded.payload).halves() else { return nil }
        var halves: [[UInt8]] = []
        for (index, part) in [first, second].enumerated() {
            halves.append(try BatchFrame.encode(
                payload: part.bytes, recordCount: part.eventCount, batchID: decoded.header.batchID.derived(index: index),
                sealedAt: decoded.header.sealedAt, codec: decoded.header.codec))
        }
        return halves
    }
}
