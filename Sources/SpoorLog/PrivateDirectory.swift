package import Foundation
package import Logging

/// Events carry user ids and properties: Spoor's directories are `0700` and its files `0600`, so other
/// local users cannot read them; on Apple platforms the directory also gets a data protection class that
/// still lets a background app write, and is excluded from backups.
package enum PrivateDirectory {
    /// The mode of every directory Spoor creates.
    package static let directoryMode: mode_t = 0o700
    /// The mode of every file Spoor creates.
    package static let fileMode: mode_t = 0o600

    /// Creates `url` (and missing parents) `0700`, or tightens an existing directory this user owns that
    /// others can reach, saying so through `logger`.
    package static func prepare(_ url: URL, logger: Logger) throws(StorageError) {
        let path = url.standardizedFileURL.path
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StorageError(.directoryUnavailable, path: path, reason: "exists and is not a directory")
            }
            let mode = info.st_mode & 0o777
            if mode & 0o077 != 0 {
                if info.st_uid == geteuid(), chmod(path, directoryMode) == 0 {
                    logger.notice(
                        "spoor: the storage directory was readable by others; tightened to 0700",
                        metadata: ["path": "\(path)", "was": "\(String(mode, radix: 8))"])
                } else {
                    logger.warning(
                        "spoor: the storage directory is readable by others and cannot be tightened",
                        metadata: ["path": "\(path)", "mode": "\(String(mode, radix: 8))"])
                }
            }
        } else {
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: NSNumber(value: Int16(directoryMode))])
            } catch {
                throw StorageError(.directoryUnavailable, path: path, reason: "cannot create the storage directory: \(error.localizedDescription)")
            }
        }
        #if canImport(Darwin)
        protect(url, logger: logger)
        #endif
    }

    #if canImport(Darwin)
    /// Files created in the directory inherit its protection class. `completeUntilFirstUserAuthentication`
    /// keeps them readable while the device is locked after the first unlock, so background launches can
    /// record and upload. Events are not worth a backup: they are delivered or dropped.
    private static func protect(_ url: URL, logger: Logger) {
        #if !os(macOS)
        do {
            try FileManager.default.setAttributes(
                [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: url.path)
        } catch {
            logger.warning("spoor: cannot set the storage directory's protection class", metadata: ["error": "\(error)"])
        }
        #endif
        var excluded = URLResourceValues()
        excluded.isExcludedFromBackup = true
        var url = url
        do { try url.setResourceValues(excluded) } catch {
            logger.warning("spoor: cannot exclude the storage directory from backups", metadata: ["error": "\(error)"])
        }
    }
    #endif
}
