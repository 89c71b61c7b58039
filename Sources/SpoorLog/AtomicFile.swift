package import Foundation

/// The one way Spoor writes a whole file: the tracker's `state.json`, the log's `state`, sealed batches in the
/// outbox, `upload.json`, and the rejected folder's batches and `dropped` count.
///
/// The bytes go to a temporary file beside the target (``StorageLayout/temporaryName(for:)``), which is renamed
/// over it, so a crash at any moment leaves either the old or the new content, never a mix. With `durable`, the
/// temporary file is forced to disk before the rename and the directory after it, so the new content also
/// survives a power cut (slow: each caller says whether its file must). Without it, a crash of the process
/// keeps the file; a power cut may leave the old one.
///
/// Files written piece by piece are not whole-file writes and do not come here: segments are appended, the
/// lifecycle checkpoint writes one of its two slots in place, the crash marker is written by a signal handler.
package enum AtomicFile {
    /// Replaces the file at `path` with `bytes`; throws if the new content is not in place, or (with `durable`)
    /// if the directory could not be synced after the rename.
    package static func write(_ bytes: [UInt8], to path: String, durable: Bool) throws(StorageError) {
        if let unsynced = try replace(bytes, at: path, durable: durable) { throw unsynced }
    }

    /// Replaces the file at `path` with `bytes`, for a caller that keeps an index of its files: throws only when
    /// the file was not replaced (the old content, or none, stays). When it was, but with `durable` its directory
    /// could not be synced after the rename, returns that error: the file is there and must be recorded as such,
    /// and the error only reported (a power cut may yet undo the rename).
    package static func replace(_ bytes: [UInt8], at path: String, durable: Bool) throws(StorageError) -> StorageError? {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let temporary = StorageLayout.temporaryName(for: path)
        let fd = try FileIO.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try bytes.withBytes { raw throws(StorageError) in try FileIO.writeAll(fd, raw, path: temporary) }
            if durable { try FileIO.sync(fd, path: temporary) }
        } catch {
            FileIO.closeFile(fd)
            try? FileIO.unlink(temporary)
            throw error
        }
        FileIO.closeFile(fd)
        try FileIO.rename(temporary, path)
        guard durable else { return nil }
        do {
            try FileIO.syncDirectory(directory.isEmpty ? "/" : directory)
            return nil
        } catch {
            return error
        }
    }

    /// Replaces the file at `url` with `bytes`.
    package static func write(_ bytes: [UInt8], to url: URL, durable: Bool) throws(StorageError) {
        try write(bytes, to: url.path, durable: durable)
    }
}
