public import Foundation

/// A fresh, empty directory per test, removed when the value goes.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The URL of `name` in the directory.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names of the directory's entries, sorted.
    public func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// The paths of the event log's segment files, in order.
    public func segmentPaths() -> [String] {
        names().filter { $0.hasPrefix("seg-") && $0.hasSuffix(".log") }.map { path + "/" + $0 }
    }
}

/// The repository root, found from this file's path (Tests/SpoorTestSupport/): where the corpora and vectors are.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
