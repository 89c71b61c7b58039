import Foundation
#if canImport(Glibc)
package import Glibc
#elseif canImport(Darwin)
package import Darwin
#endif

/// What every child this package starts gets: its own standard streams and nothing else of ours.
///
/// A child that inherited a descriptor of this process (a pipe to another child, a proxy's socket) would keep it
/// open after we close ours: a reader would wait for an end that never comes, a peer for a close it never sees.
package enum Spawning {
    /// Adds to `actions` a close of every descriptor from `first` on that this process has open (from
    /// `/proc/self/fd`); glibc skips those that are closed by then. Add it after the `dup2` actions.
    package static func closeInherited(_ actions: inout posix_spawn_file_actions_t, from first: Int32 = 3) {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        guard let highest = open.compactMap({ Int32($0) }).max(), highest >= first else { return }
        // A margin for what other threads open meanwhile.
        for fd in first...(highest + 64) { posix_spawn_file_actions_addclose(&actions, fd) }
    }

    /// A pipe whose ends close on exec, so that no other child started meanwhile holds a copy.
    package static func pipe() throws(LoopbackError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        guard Glibc.pipe(&fds) == 0 else { throw LoopbackError("pipe: errno \(errno)") }
        #else
        guard Darwin.pipe(&fds) == 0 else { throw LoopbackError("pipe: errno \(errno)") }
        #endif
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }
}
