/// The two implementations of the event codec (docs/wire-paths.md): they write the same bytes and read bytes into
/// the same events or the same ``DecodeError``.
///
/// ``EventEncoder`` and ``EventDecoder`` use ``standard``; tests, fuzz targets and benchmarks pick one to hold the
/// two equal or compare their speed.
@_spi(Testing) public enum WirePath: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Swift alone: every Apple platform, and any build without the `SystemLibraries` trait.
    case swift
    #if SPOOR_SYSTEM_LIBRARIES
    /// protobuf-c through the C shim: the default where the `SystemLibraries` trait links it.
    case protobufC
    #endif

    /// What this build's encoders and decoders use unless told otherwise.
    public static var standard: WirePath {
        #if SPOOR_SYSTEM_LIBRARIES
        .protobufC
        #else
        .swift
        #endif
    }

    /// `swift` or `protobuf-c`.
    public var description: String {
        switch self {
        case .swift: "swift"
        #if SPOOR_SYSTEM_LIBRARIES
        case .protobufC: "protobuf-c"
        #endif
        }
    }
}
