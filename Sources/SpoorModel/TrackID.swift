/// Per-event track ids, for readers that want one id per event (Sensors-style importers' `_track_id`).
///
/// Spoor's tracker leaves `Event.trackID` at 0: an event is identified exactly by its install's anonymous id
/// and its sequence number, which de-duplication and ordering use, and a random 64-bit id in every event was
/// a third of what a compressed batch carried per event. Readers that need an id derive it from that pair.
public enum TrackID {
    /// The track id of event `sequence` of the install `anonymousID`, when the event carries none: FNV-1a of
    /// the id's UTF-8 bytes, mixed with the sequence by SplitMix64's finaliser; never 0. The same event gets
    /// the same id in every reader.
    public static func derived(anonymousID: some Sequence<UInt8>, sequence: UInt64) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in anonymousID {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        let z = SplitMix64.mix(hash ^ (sequence &* SplitMix64.increment))
        return z == 0 ? 1 : z
    }

    /// `event`'s track id: the one it carries, else ``derived(anonymousID:sequence:)``.
    public static func of(_ event: Event) -> UInt64 {
        of(trackID: event.trackID, anonymousID: event.anonymousID.utf8, sequence: event.sequence)
    }

    /// The track id of an event given by its fields (for readers that hold no `Event`): `trackID` when the
    /// event carries one, else ``derived(anonymousID:sequence:)``.
    public static func of(trackID: UInt64, anonymousID: some Sequence<UInt8>, sequence: UInt64) -> UInt64 {
        trackID != 0 ? trackID : derived(anonymousID: anonymousID, sequence: sequence)
    }
}
