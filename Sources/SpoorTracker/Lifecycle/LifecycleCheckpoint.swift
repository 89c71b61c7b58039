import Foundation

/// What crash recovery needs to know about a process that may die at any moment (L10): whether a
/// session is open and since when, which pages are being timed, and the last moment the process is known
/// to have been alive. Small: it is rewritten on every lifecycle and page change.
struct LifecycleCheckpoint: Sendable, Hashable, Codable {
    /// The format version; a file with another version is ignored.
    var version: Int = LifecycleCheckpoint.currentVersion
    var state: LifecycleState
    /// The start of the open session; `nil` when no `$AppStart` waits for its `$AppEnd`.
    var sessionStart: LifecycleInstant?
    /// Pages whose timers run.
    var pages: [VisiblePage]
    var lastAlive: LifecycleInstant

    static let currentVersion = 1
}

/// Why a checkpoint file could not be used. Recovery then has nothing to recover; the file is replaced by
/// the next save.
struct CheckpointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The checkpoint's path.
    var path: String
    /// What is wrong with it.
    var reason: String

    var description: String { "lifecycle checkpoint \(path): \(reason)" }
}

/// Saves and loads the checkpoint file in the storage directory. Saves are atomic (temporary file, then
/// rename), so a crash during a save leaves the previous checkpoint whole.
struct LifecycleCheckpointStore: Sendable {
    static let fileName = "lifecycle.checkpoint"

    let url: URL

    init(directory: URL) {
        url = directory.appendingPathComponent(Self.fileName)
    }

    /// Writes `checkpoint`. No fsync: it is rewritten every few seconds and must stay cheap.
    func save(_ checkpoint: LifecycleCheckpoint) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try encoder.encode(checkpoint).write(to: url, options: .atomic)
    }

    /// The saved checkpoint; `nil` when there is none; an error when the file is unreadable, corrupt or of
    /// another version (the caller reports it and goes on without).
    func load() -> Result<LifecycleCheckpoint?, CheckpointError> {
        guard FileManager.default.fileExists(atPath: url.path) else { return .success(nil) }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            return .failure(CheckpointError(path: url.path, reason: "unreadable: \(error.localizedDescription)"))
        }
        // Check the version before decoding the rest, so a future format reads as "other version".
        struct Versioned: Decodable { var version: Int }
        guard let versioned = try? JSONDecoder().decode(Versioned.self, from: data) else {
            return .failure(CheckpointError(path: url.path, reason: "corrupt: not a checkpoint (\(data.count) bytes)"))
        }
        guard versioned.version == LifecycleCheckpoint.currentVersion else {
            return .failure(CheckpointError(path: url.path, reason: "unsupported version \(versioned.version)"))
        }
        do {
            return .success(try JSONDecoder().decode(LifecycleCheckpoint.self, from: data))
        } catch {
            return .failure(CheckpointError(path: url.path, reason: "corrupt: \(error)"))
        }
    }
}
