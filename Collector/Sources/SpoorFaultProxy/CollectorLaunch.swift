public import Foundation

/// Finding a built product of the Collector package and starting `spoor-collector` until it listens: the one
/// place the tests, the fault proxy's ``CollectorServer`` and the load tool do it.
public enum CollectorLaunch {
    /// The Collector package's build of `product`: the path in the environment variable `override` when set,
    /// else its debug build folder, else its release one.
    public static func builtProduct(_ product: String, override: String) throws(FaultProxyError) -> URL {
        if let path = ProcessInfo.processInfo.environment[override] { return URL(fileURLWithPath: path) }
        // Sources/SpoorFaultProxy/CollectorLaunch.swift → the Collector package.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let candidate = package.appendingPathComponent(".build/\(configuration)/\(product)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw FaultProxyError("\(product) is not built under \(package.path)/.build; run swift build first")
    }

    /// The built `spoor-collector`: `SPOOR_COLLECTOR_BIN`, else the package's debug or release build.
    public static func collectorBinary() throws(FaultProxyError) -> URL {
        try builtProduct("spoor-collector", override: "SPOOR_COLLECTOR_BIN")
    }

    /// Starts `binary` (the built collector when nil) with `arguments` and waits, at most `timeout`, for its one
    /// `listening on 127.0.0.1:PORT` line; returns the running process and the port. What it prints afterwards
    /// is drained, so a full pipe never blocks it.
    public static func start(
        _ arguments: [String], binary: URL? = nil, timeout: TimeInterval = 30
    ) throws(FaultProxyError) -> (process: Process, port: Int) {
        let process = Process()
        let output = Pipe()
        if let binary {
            process.executableURL = binary
        } else {
            process.executableURL = try collectorBinary()
        }
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw FaultProxyError("cannot start spoor-collector: \(error)")
        }
        let reader = output.fileHandleForReading
        var line = Data()
        let deadline = Date().addingTimeInterval(timeout)
        while !line.contains(UInt8(ascii: "\n")), Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }  // it exited
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on 127.0.0.1:"), let port = Int(text.split(separator: ":").last ?? "") else {
            process.terminate()
            process.waitUntilExit()
            throw FaultProxyError("spoor-collector did not print `listening on` (got \(text))")
        }
        Thread.detachNewThread { while !reader.availableData.isEmpty {} }
        return (process, port)
    }
}
