package import Foundation
import SpoorSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SpoorLog
import SpoorWire

/// What crash recovery needs to know about a process that may die at any moment (L10): whether a
/// session is open and since when, which pages are being timed, and the last moment the process is known
/// to have been alive, and which of the recovered events it emits. Small: it is rewritten on every lifecycle and
/// page change. Each process keeps its own in its log directory; whoever adopts that log once the process is gone
/// turns it into events (``AdoptedLifecycle``).
package struct LifecycleCheckpoint: Sendable, Hashable, Codable {
    /// The format version; a file with another version is ignored.
    package var version: Int = LifecycleCheckpoint.currentVersion
    package var state: LifecycleState
    /// The start of the open session; `nil` when no `$AppStart` waits for its `$AppEnd`.
    package var sessionStart: LifecycleInstant?
    /// Pages whose timers run.
    package var pages: [VisiblePage]
    package var lastAlive: LifecycleInstant
    /// The auto event kinds the process emits (``AutoTrackEventKind`` raw values), so that whoever recovers its
    /// session emits what it would have; absent from older checkpoints (the recovering process's own then apply).
    package var enabled: [String]?

    package static let currentVersion = 1

    package init(state: LifecycleState, sessionStart: LifecycleInstant?, pages: [VisiblePage], lastAlive: LifecycleInstant) {
        self.state = state
        self.sessionStart = sessionStart
        self.pages = pages
        self.lastAlive = lastAlive
    }
}

/// Why a checkpoint file could not be used. Recovery then has nothing to recover; the file is replaced by
/// the next save.
package struct CheckpointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The checkpoint's path.
    package var path: String
    /// What is wrong with it.
    package var reason: String

    package var description: String { "lifecycle checkpoint \(path): \(reason)" }
}

/// Saves and loads the checkpoint file in a directory: a process's log directory (the storage directory itself for an
/// older Spoor's, or a tracker whose store is not a log).
///
/// It is saved on the caller's thread at every lifecycle and page change, so a save must be cheap: a
/// temporary file and a rename cost 200 µs or more on a slow disk. Instead the file holds two slots,
/// written in turn with one `pwrite` on a descriptor kept open, each with a sequence number and a
/// CRC-32C: a crash in the middle of a save leaves the other slot, the previous checkpoint, whole.
///
/// Slot layout (little-endian): magic `SPCK`, sequence (u64), JSON length (u32), CRC-32C of the JSON (u32),
/// then the JSON. No fsync: a crash of the process keeps what was written; a power cut may lose the last
/// few seconds, which only makes a recovered `$AppEnd` a little earlier.
package final class LifecycleCheckpointStore: Sendable {
    /// The room for one slot; a checkpoint with hundreds of visible pages still fits.
    package static let slotSize = 64 << 10
    private static let magic: [UInt8] = Array("SPCK".utf8)
    private static let headerSize = 20

    package let url: URL
    /// The open file (-1 before the first save) and the newest slot's sequence number.
    private let file = Locked((fd: Int32(-1), sequence: UInt64(0)))

    package init(directory: URL) {
        url = directory.appendingPathComponent(StorageLayout.lifecycleCheckpointName)
    }

    deinit {
        file.withLock { file in
            if file.fd >= 0 { close(file.fd) }
        }
    }

    /// Writes `checkpoint` into the slot after the newest one.
    package func save(_ checkpoint: LifecycleCheckpoint) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = [UInt8](try encoder.encode(checkpoint))
        guard json.count <= Self.slotSize - Self.headerSize else {
            throw CheckpointError(path: url.path, reason: "\(json.count) bytes do not fit a slot of \(Self.slotSize)")
        }
        try file.withLock { (file: inout (fd: Int32, sequence: UInt64)) throws(CheckpointError) in
            if file.fd < 0 {
                // A file of its own, never the one found here: that one was read (and turned into events) already, and
                // may still be open in the process that wrote it (an older Spoor's, moved here from the storage
                // directory), whose writes must not land in this one.
                unlink(url.path)
                file.fd = SystemCall.retryingInterrupts { open(url.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
                guard file.fd >= 0 else { throw CheckpointError(path: url.path, reason: "cannot open: errno \(errno)") }
                file.sequence = 0
            }
            file.sequence += 1
            let sequence = file.sequence
            var slot = Self.magic
            withUnsafeBytes(of: sequence.littleEndian) { slot.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(json.count).littleEndian) { slot.append(contentsOf: $0) }
            withUnsafeBytes(of: CRC32C.checksum(json).littleEndian) { slot.append(contentsOf: $0) }
            slot.append(contentsOf: json)
            let offset = off_t(Int(sequence % 2) * Self.slotSize)
            let written = slot.withUnsafeBytes { bytes in
                SystemCall.retryingInterrupts { pwrite(file.fd, bytes.baseAddress, bytes.count, offset) }
            }
            guard written == slot.count else {
                throw CheckpointError(path: url.path, reason: "short write: errno \(errno)")
            }
        }
    }

    /// The JSON and sequence of each valid slot in `bytes`.
    private static func slots(in bytes: [UInt8]) -> [(sequence: UInt64, json: ArraySlice<UInt8>)] {
        var found: [(UInt64, ArraySlice<UInt8>)] = []
        for start in [0, slotSize] where bytes.count >= start + headerSize {
            guard Array(bytes[start..<start + 4]) == magic else { continue }
            func integer<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
                bytes[start + at..<start + at + MemoryLayout<T>.size].reversed().reduce(T(0)) { $0 << 8 | T($1) }
            }
            let sequence = integer(4, UInt64.self)
            let length = Int(integer(12, UInt32.self))
            let crc = integer(16, UInt32.self)
            let body = start + headerSize
            guard length <= slotSize - headerSize, bytes.count >= body + length else { continue }
            let json = bytes[body..<body + length]
            guard CRC32C.checksum(Array(json)) == crc else { continue }
            found.append((sequence, json))
        }
        return found
    }

    /// The saved checkpoint; `nil` when there is none; an error when the file is unreadable, corrupt or of
    /// another version (the caller reports it and goes on without).
    package func load() -> Result<LifecycleCheckpoint?, CheckpointError> {
        guard FileManager.default.fileExists(atPath: url.path) else { return .success(nil) }
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: url))
        } catch {
            return .failure(CheckpointError(path: url.path, reason: "unreadable: \(error.localizedDescription)"))
        }
        guard let newest = Self.slots(in: bytes).max(by: { $0.sequence < $1.sequence }) else {
            return .failure(CheckpointError(path: url.path, reason: "corrupt: no valid slot (\(bytes.count) bytes)"))
        }
        let data = Data(newest.json)
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
