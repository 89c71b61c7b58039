import ArgumentParser
import Foundation
import SpoorTooling
import SpoorWire

/// The root command: its subcommands, and the mapping from what they throw to the exit status.
struct SpoorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spoor",
        abstract: "Encode, decode, inspect and upload Spoor events, batches and storage directories.",
        discussion: """
            Exit status: 0 success; 2 bad input (the message names the line, field or byte offset); \
            64 usage error; 66 a file or directory that cannot be read; 1 anything else.
            Shell completions: spoor --generate-completion-script bash|zsh|fish
            """,
        subcommands: [
            EncodeCommand.self, DecodeCommand.self, InspectCommand.self, EventsCommand.self, UploadCommand.self, SimulateCommand.self,
        ]
    )

    /// Parses `arguments`, runs the command they name and returns the exit status.
    static func main(_ arguments: [String]) async -> Int32 {
        if arguments.isEmpty {
            return CLI.fail(helpMessage(), status: CLI.usageError)
        }
        let names = configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
        if let first = arguments.first, !first.hasPrefix("-"), !names.contains(first) {
            return CLI.fail("spoor: unknown command '\(first)'\n\n\(helpMessage())", status: CLI.usageError)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            return 0
        } catch let code as ExitCode {
            // Thrown by a subcommand that has already written its message.
            return code.rawValue
        } catch {
            return report(error, arguments: arguments)
        }
    }

    /// Help and completion requests go to standard output with status 0; a parse or validation failure is
    /// a usage error (64 on every platform); anything else is 1. Messages start with the command's name.
    static func report(_ error: any Error, arguments: [String]) -> Int32 {
        let message = fullMessage(for: error)
        let code = exitCode(for: error)
        if code == .success {
            CLI.output(Array((message.hasSuffix("\n") ? message : message + "\n").utf8))
            return 0
        }
        let subcommand = configuration.subcommands.first { $0.configuration.commandName == arguments.first }
        let name = subcommand.flatMap { $0.configuration.commandName }.map { "spoor \($0)" } ?? "spoor"
        var text = message
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        return CLI.fail("\(name): \(text)", status: code == .validationFailure ? CLI.usageError : 1)
    }
}
