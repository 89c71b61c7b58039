#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What a process on this machine has used so far, from Linux's /proc: how the load tool and the tests weigh a
/// collector process.
package enum ProcessUsage {
    /// The process's peak resident memory in bytes (`VmHWM`).
    package static func peakRSS(of pid: Int32) throws(LoopbackError) -> Int {
        let status = try read("/proc/\(pid)/status")
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw LoopbackError("no VmHWM for process \(pid)")
        }
        return kilobytes * 1024
    }

    /// The process's user + system CPU time in seconds.
    package static func cpuSeconds(of pid: Int32) throws(LoopbackError) -> Double {
        let stat = try read("/proc/\(pid)/stat")
        // Fields after the command name, which ends at the last ')': state is field 3, utime 14, stime 15.
        guard let close = stat.lastIndex(of: ")") else { throw LoopbackError("bad /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw LoopbackError("bad /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func read(_ path: String) throws(LoopbackError) -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw LoopbackError("cannot read \(path): \(error)")
        }
    }
}
