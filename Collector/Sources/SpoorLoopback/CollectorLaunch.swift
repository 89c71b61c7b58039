package import Foundation
import Synchronization

/// Starting a `spoor-collector` process and waiting until it listens: the one way the load tool and the tests
/// do it.
package enum CollectorLaunch {
    /// Starts `binary` with `arguments` (a `serve` command line listening on 127.0.0.1) and waits, at most
    /// `timeout`, for the one `listening on 127.0.0.1:PORT` line the collector prints once it accepts connections;
    /// returns the running process and its port. What it prints afterwards (`--ndjson -`) is read and dropped, so
    /// a full pipe never blocks it. A process that exits or stays silent instead is stopped, and this throws.
    /// `environment` replaces the process's environment when given; `standardError` is a file its log is appended
    /// to (else it is dropped).
    package static func start(
        _ binary: URL, _ arguments: [String], timeout: Duration = .seconds(30),
        environment: [String: String]? = nil, standardError: URL? = nil
    ) throws(LoopbackError) -> (process: Process, port: Int) {
        let process = Process()
        let output = Pipe()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        if let environment { process.environment = environment }
        if let standardError {
            if !FileManager.default.fileExists(atPath: standardError.path) {
                _ = FileManager.default.createFile(atPath: standardError.path, contents: nil)
            }
            guard let log = FileHandle(forWritingAtPath: standardError.path) else {
                throw LoopbackError("cannot write \(standardError.path)")
            }
            log.seekToEndOfFile()
            process.standardError = log
        }
        do {
            try process.run()
        } catch {
            throw LoopbackError("cannot start \(binary.path): \(error)")
        }
        // One thread reads the first line, hands it over, then drains the pipe until the process ends.
        let firstLine = Mutex(Data())
        let lineRead = DispatchSemaphore(value: 0)
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }  // it exited
                line.append(chunk)
            }
            firstLine.withLock { $0 = line }
            lineRead.signal()
            while !reader.availableData.isEmpty {}
        }
        let waited = lineRead.wait(timeout: .after(timeout))
        let text = String(decoding: firstLine.withLock { $0 }, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard waited == .success, text.hasPrefix("listening on 127.0.0.1:"), let port = Int(text.split(separator: ":").last ?? "") else {
            process.terminate()
            process.waitUntilExit()
            let seen = waited == .success ? "got \(text.isEmpty ? "nothing" : text)" : "nothing within \(timeout)"
            throw LoopbackError("\(binary.lastPathComponent) did not print `listening on 127.0.0.1:PORT` (\(seen))")
        }
        return (process, port)
    }
}

package extension DispatchTime {
    /// The moment `duration` from now, for the semaphore waits of threads that are not tasks.
    static func after(_ duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        return .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
