public import Foundation

/// Small files replaced whole: the tracker's state and the lifecycle checkpoint.
public enum AtomicFile {
    /// Writes `bytes` to `url` through a temporary file beside it and a rename, so a crash at any moment
    /// leaves either the old or the new content, never a mix. With `durable`, the file and its directory
    /// are forced to disk before this returns (slow: use it for state that must survive a power cut).
    public static func write(_ bytes: [UInt8], to url: URL, durable: Bool) throws(StorageError) {
        try FileIO.writeAtomically(bytes, to: url.path, directory: url.deletingLastPathComponent().path, durable: durable)
    }
}
