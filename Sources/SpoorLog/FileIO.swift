#if canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
package import Musl
#elseif canImport(Darwin)
package import Darwin
#endif

import SpoorSystem

/// Thin, typed wrappers over the POSIX calls the log needs: each returns or throws a ``StorageError`` with the
/// call's errno, and retries a call a signal interrupted.
package enum FileIO {
    package static var errno: Int32 {
        #if canImport(Glibc)
        Glibc.errno
        #elseif canImport(Musl)
        Musl.errno
        #else
        Darwin.errno
        #endif
    }

    package static func closeFile(_ fd: Int32) {
        _ = Glibc_close(fd)
    }

    package static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    package static func error(_ operation: String, _ path: String, code: Int32 = FileIO.errno) -> StorageError {
        let kind: StorageError.Kind
        switch code {
        case ENOSPC, EFBIG, EDQUOT: kind = .diskFull
        case EACCES, EPERM, EROFS, ENOENT, ENOTDIR: kind = .directoryUnavailable
        default: kind = .ioFailure
        }
        return StorageError(kind, path: path, code: code, reason: "\(operation) failed: \(message(code))")
    }

    package static func open(_ path: String, _ flags: Int32, mode: mode_t = PrivateDirectory.fileMode) throws(StorageError) -> Int32 {
        let fd = SystemCall.retryingInterrupts { path.withCString { Glibc_open($0, flags | O_CLOEXEC, mode) } }
        if fd < 0 { throw error("open", path) }
        return fd
    }

    /// Writes all of `bytes` at the file's current offset.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(StorageError) {
        var done = 0
        while done < bytes.count {
            let n = SystemCall.retryingInterrupts { write(fd, bytes.baseAddress! + done, bytes.count - done) }
            guard n > 0 else { throw error("write", path, code: n == 0 ? EIO : errno) }
            done += n
        }
    }

    package static func pwriteAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(StorageError) {
        let result: Int32 = bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = SystemCall.retryingInterrupts { pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done)) }
                guard n > 0 else { return n == 0 ? EIO : FileIO.errno }
                done += n
            }
            return 0
        }
        if result != 0 { throw error("write", path, code: result) }
    }

    /// Reads exactly `count` bytes at `offset`, or fewer if the file ends first.
    package static func pread(_ fd: Int32, count: Int, at offset: Int, path: String) throws(StorageError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let result: (Int, Int32) = buffer.withUnsafeMutableBytes { raw in
            var done = 0
            while done < count {
                let n = SystemCall.retryingInterrupts {
                    #if canImport(Darwin)
                    Darwin.pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done))
                    #else
                    Glibc.pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done))
                    #endif
                }
                if n == 0 { break }
                guard n > 0 else { return (done, FileIO.errno) }
                done += n
            }
            return (done, 0)
        }
        if result.1 != 0 { throw error("read", path, code: result.1) }
        if result.0 < count { buffer.removeSubrange(result.0...) }
        return buffer
    }

    package static func readFile(_ path: String, limit: Int) throws(StorageError) -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { closeFile(fd) }
        let size = try fileSize(fd, path: path)
        guard size <= limit else {
            throw StorageError(.corruptFile, path: path, reason: "file of \(size) bytes is larger than the \(limit)-byte limit")
        }
        return try pread(fd, count: size, at: 0, path: path)
    }

    package static func fileSize(_ fd: Int32, path: String) throws(StorageError) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error("stat", path) }
        return Int(info.st_size)
    }

    package static func sync(_ fd: Int32, path: String) throws(StorageError) {
        let result = SystemCall.retryingInterrupts {
            #if canImport(Darwin)
            fsync(fd)
            #else
            fdatasync(fd)
            #endif
        }
        if result != 0 { throw error("fsync", path) }
    }

    package static func syncDirectory(_ path: String) throws(StorageError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { closeFile(fd) }
        if SystemCall.retryingInterrupts({ fsync(fd) }) != 0 && errno != EINVAL { throw error("fsync", path) }
    }

    package static func truncate(_ fd: Int32, to size: Int, path: String) throws(StorageError) {
        if SystemCall.retryingInterrupts({ ftruncate(fd, off_t(size)) }) != 0 { throw error("truncate", path) }
    }

    package static func rename(_ from: String, _ to: String) throws(StorageError) {
        let result = from.withCString { f in to.withCString { t in Glibc_rename(f, t) } }
        if result != 0 { throw error("rename", to) }
    }

    package static func unlink(_ path: String) throws(StorageError) {
        let result = path.withCString { Glibc_unlink($0) }
        if result != 0 && errno != ENOENT { throw error("unlink", path) }
    }

    package static func makeDirectory(_ path: String) throws(StorageError) {
        let result = path.withCString { mkdir($0, PrivateDirectory.directoryMode) }
        if result != 0 && errno != EEXIST { throw error("mkdir", path) }
    }

    /// Whether `path` is a directory itself (`lstat`: a symbolic link to one is not).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The names in a directory, without `.` and `..`.
    package static func list(_ path: String) throws(StorageError) -> [String] {
        guard let dir = opendir(path) else { throw error("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

// Unambiguous names for libc functions that Swift types shadow.
@inline(__always) private func Glibc_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
@inline(__always) private func Glibc_rename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    rename(from, to)
}
@inline(__always) private func Glibc_unlink(_ path: UnsafePointer<CChar>) -> Int32 {
    unlink(path)
}
@inline(__always) private func Glibc_close(_ fd: Int32) -> Int32 {
    close(fd)
}

