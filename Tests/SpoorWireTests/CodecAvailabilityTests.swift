import SpoorWire
import Testing

/// Where SpoorWire links libzstd, zstd must be there: the other test targets run their zstd cases only where it
/// is linked, and this is what keeps a Linux build from losing them unseen.
@Suite struct CodecAvailabilityTests {
    @Test func theLinkedCodecsAreTheOnesTheTraitPromises() {
        #expect(Codec.gzip.isAvailable)
        #expect(Codec.none.isAvailable)
        #if SPOOR_SYSTEM_LIBRARIES
        #expect(Codec.zstd.isAvailable)
        #expect(Codec.preferred == .zstd)
        #else
        #expect(!Codec.zstd.isAvailable)
        #expect(Codec.preferred == .gzip)
        #endif
    }
}
