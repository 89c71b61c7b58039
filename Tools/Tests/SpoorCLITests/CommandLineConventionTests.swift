import Foundation
import SpoorWire
import Testing

/// The conventions of the command-line spec that hold for every subcommand: help, completions, usage errors.
@Suite("spoor command-line conventions")
struct CommandLineConventionTests {
    static let subcommands = ["encode", "decode", "inspect", "events", "simulate"]

    @Test(arguments: subcommands)
    func everySubcommandHasHelp(_ name: String) async throws {
        for arguments in [[name, "--help"], ["help", name]] {
            let result = try await SpoorProcess.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdoutText.contains("USAGE: spoor \(name)"), "\(arguments): \(result.stdoutText)")
        }
    }

    @Test func rootHelpListsTheSubcommands() async throws {
        let result = try await SpoorProcess.run(["--help"])
        #expect(result.status == 0)
        for name in Self.subcommands { #expect(result.stdoutText.contains("  \(name) "), "\(name)") }
    }

    /// The lifecycle test helper is a program of the tests, not a hidden command of the shipped tool.
    @Test func theShippedToolHasNoTestHelperCommand() async throws {
        let result = try await SpoorProcess.run(["_lifecycle-child", "/tmp", "exit"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown command '_lifecycle-child'"))
    }

    @Test func noCommandIsAUsageError() async throws {
        let result = try await SpoorProcess.run([])
        #expect(result.status == 64)
        #expect(result.stderr.contains("USAGE: spoor <subcommand>"))
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts(_ shell: String) async throws {
        let result = try await SpoorProcess.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        for name in Self.subcommands { #expect(result.stdoutText.contains(name), "\(shell) script lacks \(name)") }
    }

    /// ArgumentParser's own usage errors come out as 64 with the subcommand's name first, whatever the platform.
    @Test(arguments: [["inspect", "a", "b"], ["simulate", "--bogus", "x"], ["encode", "a", "b"], ["decode", "--nope"]])
    func badArgumentsAreUsageErrors(_ arguments: [String]) async throws {
        let result = try await SpoorProcess.run(arguments)
        #expect(result.status == 64, "\(arguments)")
        #expect(result.stderr.hasPrefix("spoor \(arguments[0]): "), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
