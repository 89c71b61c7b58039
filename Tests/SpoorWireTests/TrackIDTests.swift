import SpoorModel
import Testing

/// The derived track id is a contract between readers (the collector, importers): pinned by vectors computed
/// independently (FNV-1a 64 of the UTF-8 bytes, then SplitMix64's finaliser over it XOR sequence × golden ratio).
@Suite struct TrackIDTests {
    @Test func derivedIDsMatchTheDocumentedFunction() {
        let install = "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11"
        #expect(TrackID.derived(anonymousID: install.utf8, sequence: 1) == 0x1d79_f811_e97b_ea08)
        #expect(TrackID.derived(anonymousID: install.utf8, sequence: 2) == 0xb5ce_c7ff_11ca_dd0b)
        #expect(TrackID.derived(anonymousID: "".utf8, sequence: 0) == 0xf52a_15e9_a9b5_e89b)
    }

    @Test func anEventKeepsTheIDItCarries() {
        var event = Event(name: "E", time: 0, sequence: 1, distinctID: "a", anonymousID: "a", lib: LibInfo(lib: "Linux", libVersion: "0", method: .code))
        #expect(TrackID.of(event) == TrackID.derived(anonymousID: "a".utf8, sequence: 1))
        event.trackID = 42
        #expect(TrackID.of(event) == 42)
    }
}
