package import Foundation
import SpoorLog

/// A crash the previous process recorded before it died.
package struct CrashRecord: Sendable, Hashable {
    /// Wall time of the crash, epoch milliseconds.
    package var time: Int64
    /// `app_crashed_reason`, such as `SIGSEGV` or the reason a simulated crash gave.
    package var reason: String

    package init(time: Int64, reason: String) {
        self.time = time
        self.reason = reason
    }
}

/// The crash marker file, one per process in its log directory: opened ahead of time so a crashing process can
/// record the crash with nothing but `write(2)`.
///
/// Format: the crash's epoch milliseconds in decimal, a space, the reason, a newline. An empty file means
/// no crash.
package final class CrashMarker: @unchecked Sendable {
    package static let bufferSize = 512

    /// The open marker file. Immutable after init; the fd is closed in deinit.
    let fd: Int32
    /// Scratch space for formatting a record without allocating (the signal handler may run anywhere).
    let buffer: UnsafeMutablePointer<UInt8>

    /// Reads the crash a previous process recorded in `directory`; `nil` when it recorded none or the
    /// record is unreadable.
    package static func readPrevious(in directory: URL) -> CrashRecord? {
        let url = directory.appendingPathComponent(StorageLayout.crashMarkerName)
        guard let data = try? Data(contentsOf: url), !data.isEmpty,
              let text = String(data: data, encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let time = Int64(parts[0]) else { return nil }
        return CrashRecord(time: time, reason: String(parts[1]))
    }

    /// Opens a new, empty marker in `directory` in place of the one there (already read); `nil` when the file
    /// cannot be made. A new file, not the old one emptied: the process that wrote the old one may still hold it open
    /// (an older Spoor's, moved here from the storage directory), and its crash must not be taken for this one's.
    package init?(directory: URL) {
        let path = directory.appendingPathComponent(StorageLayout.crashMarkerName).path
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        self.fd = fd
        buffer = .allocate(capacity: Self.bufferSize)
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// Records a crash with the given reason. Used by simulated crashes and by code that catches a fatal
    /// condition itself; the signal handler uses `writeRecord` directly.
    package func record(reason: String, time: Int64) {
        var reason = reason
        reason.withUTF8 { bytes in
            guard let base = bytes.baseAddress else {
                Self.writeRecord(fd: fd, buffer: buffer, time: time, reason: buffer, count: 0)
                return
            }
            Self.writeRecord(fd: fd, buffer: buffer, time: time, reason: base, count: bytes.count)
        }
    }

    /// Async-signal-safe: formats into `buffer` (`bufferSize` bytes) and writes it with `pwrite(2)` at offset 0.
    /// No allocation, no locks, no Swift runtime calls beyond plain memory access.
    static func writeRecord(
        fd: Int32, buffer: UnsafeMutablePointer<UInt8>, time: Int64, reason: UnsafePointer<UInt8>, count: Int
    ) {
        var length = 0
        // Decimal digits of time, written backwards into a small stack tuple-free area at the buffer's end.
        var value = time < 0 ? UInt64(0) : UInt64(time)
        var digits = 0
        let scratch = buffer + (Self.bufferSize - 24)
        repeat {
            scratch[digits] = UInt8(48 + value % 10)
            value /= 10
            digits += 1
        } while value > 0
        while digits > 0 {
            digits -= 1
            buffer[length] = scratch[digits]
            length += 1
        }
        buffer[length] = 32 // space
        length += 1
        let room = Self.bufferSize - 24 - length - 1
        let copied = min(count, room)
        var index = 0
        while index < copied {
            // A newline inside the reason would end the record early.
            let byte = reason[index]
            buffer[length] = byte == 10 ? 32 : byte
            length += 1
            index += 1
        }
        buffer[length] = 10 // newline
        length += 1
        _ = pwrite(fd, buffer, length, 0)
    }
}
