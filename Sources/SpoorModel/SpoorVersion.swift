/// The version of the Spoor library: `$lib_version` in every event and the `Spoor/…` in the uploader's
/// `User-Agent`.
public enum SpoorVersion {
    /// The version, `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"
}
