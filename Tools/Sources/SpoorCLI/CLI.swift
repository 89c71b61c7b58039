import ArgumentParser
import Foundation
import SpoorTooling
import SpoorWire

/// Input and output helpers shared by the subcommands.
enum CLI {
    /// Exit status for bad input: the message names the line, field or byte offset.
    static let badInput: Int32 = 2
    /// Exit status for a usage error (`EX_USAGE`), on every platform.
    static let usageError: Int32 = 64
    /// Exit status for a file or directory that cannot be read (`EX_NOINPUT`).
    static let cannotRead: Int32 = 66

    /// Writes `message` and a newline to standard error and returns `status`.
    static func fail(_ message: String, status: Int32 = 2) -> Int32 {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        return status
    }

    /// Writes `message` to standard error and returns the exit code to throw from `run()`.
    static func failure(_ message: String, status: Int32 = 2) -> ExitCode {
        ExitCode(fail(message, status: status))
    }

    /// Reads `path` ("-" or `nil`: standard input), or throws the exit code for an unreadable file.
    static func readInput(_ path: String?, command: String) throws -> [UInt8] {
        guard let path, path != "-" else { return readStandardInput() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw failure("spoor \(command): cannot read \(path)", status: cannotRead)
        }
        return [UInt8](data)
    }

    /// Reads standard input to its end.
    static func readStandardInput() -> [UInt8] {
        [UInt8](FileHandle.standardInput.readDataToEndOfFile())
    }

    /// Writes bytes to standard output; false when it is closed (a reader that went away).
    @discardableResult
    static func output(_ bytes: [UInt8]) -> Bool { StandardOutput.write(bytes) }

    /// Splits input into lines, numbered from 1, without their line ends.
    static func lines(_ bytes: [UInt8]) -> [(number: Int, text: String)] {
        var result: [(Int, String)] = []
        var number = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var slice = line
            if slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
            result.append((number, String(decoding: slice, as: UTF8.self)))
        }
        if let last = result.last, last.1.isEmpty { result.removeLast() }
        return result
    }
}

