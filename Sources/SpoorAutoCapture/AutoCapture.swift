public import SpoorTracker

/// Hands captured pages and clicks to a tracker, as its ``Configuration/autoCapture`` allows.
///
/// The UIKit and SwiftUI glue call this; so can any host that has its own view tree.
public final class AutoCapture: Sendable {
    /// The tracker events go to.
    public let tracker: Tracker
    /// What is captured: the tracker's `configuration.autoCapture`.
    public let options: AutoCaptureOptions

    /// Captures for `tracker`, with its configuration's options.
    public init(tracker: Tracker) {
        self.tracker = tracker
        options = tracker.configuration.autoCapture
    }

    /// A page appeared; `id` identifies the page instance (the controller's object identity).
    /// Containers and system controllers are skipped.
    public func pageAppeared(_ page: any CapturedPage, id: String) {
        guard options.contains(.pages), let info = CaptureRules.pageInfo(page) else { return }
        tracker.pageAppear(id, page: info)
    }

    /// The page `id` disappeared. A page never reported as appeared changes nothing in the tracker.
    public func pageDisappeared(id: String) {
        guard options.contains(.pages) else { return }
        tracker.pageDisappear(id)
    }

    /// The user tapped `view`. The tracker applies the element ignore lists and the 100 ms debounce.
    public func clicked(_ view: any CapturedView) {
        guard options.contains(.clicks), let click = CaptureRules.click(on: view) else { return }
        tracker.trackClick(click)
    }
}
