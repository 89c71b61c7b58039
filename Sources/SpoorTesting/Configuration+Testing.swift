public import SpoorSystem
public import SpoorTracker

/// The test seams of a tracker's configuration: the one door through which this package's tests and an app's
/// tests give a tracker its time and its upload jitter. An app that does not link `SpoorTesting` does not see them.
extension Configuration {
    /// The one clock of the tracker, its log and its uploader (event `time`, durations, syncs, backoff,
    /// `Retry-After`, request timeouts). Default: the system's (``/SpoorSystem/SystemClock``).
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// var configuration = Configuration(storageDirectory: directory)
    /// configuration.clock = clock
    /// configuration.autoTrack.heartbeatInterval = nil   // a manual clock: call noteAlive() instead
    /// ```
    public var clock: any SpoorClock {
        get { testSeams.clock }
        set { testSeams.clock = newValue }
    }

    /// The uploader's jitter, for deterministic backoff; `nil` (the default) uses the system generator.
    public var uploadRandom: (any RandomNumberGenerator & Sendable)? {
        get { testSeams.uploadRandom }
        set { testSeams.uploadRandom = newValue }
    }
}
