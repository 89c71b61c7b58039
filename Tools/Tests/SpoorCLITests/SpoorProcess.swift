import Foundation
import SpoorWire

/// Runs the built `spoor` executable, which sits beside the test bundle in the build products directory.
enum SpoorProcess {
    /// The repository root (this file is Tools/Tests/SpoorCLITests/SpoorProcess.swift).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var executable: URL { built("spoor") }

    /// `SpoorLifecycleChild DIR MODE [SOURCE]`, the tests' program with a real lifecycle.
    static var lifecycleChild: URL { built("SpoorLifecycleChild") }

    /// The built executable `name` in the build products directory.
    static func built(_ name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Apple platforms the runner sits inside an .xctest bundle.
        while directory.pathComponents.count > 1, !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) {
            if directory.lastPathComponent.hasSuffix("debug") || directory.lastPathComponent.hasSuffix("release") { break }
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// Writing to a child that has already exited raises SIGPIPE, whose default action ends this whole test
    /// process without a word (seen as a silent `swift test` exit 1, one run in six). Ignored once: the write
    /// fails with EPIPE instead.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `tool` (the spoor executable unless given) with `arguments`, feeding `input` on stdin.
    static func run(_ arguments: [String], input: Data = Data(), tool: URL? = nil) throws -> Result {
        _ = ignoreBrokenPipes
        let process = Process()
        process.executableURL = tool ?? executable
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Feed and drain concurrently so large inputs and outputs cannot deadlock on full pipes.
        let group = DispatchGroup()
        let errorData = LockedData()
        DispatchQueue.global().async(group: group) {
            // A child that refuses its arguments exits without reading: the write then fails, and that is fine.
            try? stdin.fileHandleForWriting.write(contentsOf: input)
            try? stdin.fileHandleForWriting.close()
        }
        DispatchQueue.global().async(group: group) {
            errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
        }
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus, stdout: out, stderr: String(decoding: errorData.value, as: UTF8.self))
    }
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    var value: Data { lock.lock(); defer { lock.unlock() }; return data ?? Data() }
}
