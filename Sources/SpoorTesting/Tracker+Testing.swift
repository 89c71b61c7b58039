public import SpoorTracker

extension Tracker {
    /// Waits until the tracker's writer has stored every event accepted so far (and synced them as the
    /// durability setting says), without sending anything: what a test awaits before it moves a manual clock
    /// that could start an upload, so the upload takes all of them, not the part the writer had reached.
    ///
    /// Holds no thread while it waits. Returns false if the writer did not get there within `timeout`
    /// (generous by default: a loaded machine may hold the writer back; a passing test never waits it out).
    public func stored(within timeout: Duration = .seconds(300)) async -> Bool {
        await pipeline.requestFlush().value(orAfter: timeout, false)
    }
}
