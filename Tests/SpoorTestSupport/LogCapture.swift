import InMemoryLogging
public import Logging

/// Collects log messages (through swift-log's `InMemoryLogHandler`) so tests can check what was reported.
public struct LogCapture: Sendable {
    /// One message, its metadata flattened to strings.
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let handler: InMemoryLogHandler

    public init() {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
    }

    /// A logger whose messages land here.
    public var logger: Logger {
        let handler = handler
        return Logger(label: "test") { _ in handler }
    }

    /// Every message so far, oldest first.
    public var all: [Entry] {
        handler.entries.map { entry in
            Entry(level: entry.level, message: "\(entry.message)", metadata: entry.metadata.mapValues { "\($0)" })
        }
    }

    /// Whether a message at `level` holds `fragment` in its text or in a `key=value` of its metadata.
    public func contains(_ level: Logger.Level, _ fragment: String) -> Bool {
        all.contains { entry in
            guard entry.level == level else { return false }
            let metadata = entry.metadata.map { "\($0)=\($1)" }.sorted().joined(separator: " ")
            return "\(entry.message) \(metadata)".contains(fragment)
        }
    }
}
