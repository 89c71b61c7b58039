import Logging

/// Messages decided while one of the log's locks is held, logged once every lock is released: a log handler may
/// call back into the log (track an event about the failure), and must not find its own caller's lock taken.
struct LogMessages {
    private var items: [(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata)] = []

    mutating func add(_ level: Logger.Level, _ message: Logger.Message, _ metadata: Logger.Metadata = [:]) {
        items.append((level, message, metadata))
    }

    /// Logs the messages, in the order they were added.
    func emit(to logger: Logger) {
        for item in items { logger.log(level: item.level, item.message, metadata: item.metadata) }
    }
}
