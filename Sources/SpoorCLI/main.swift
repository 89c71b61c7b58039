// Transport-branch stand-in for the dispatcher: the lead's main.swift replaces this file.
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.isEmpty ? "" : arguments.removeFirst()
switch command {
case "inspect": exit(InspectCommand.run(arguments))
default: print("spoor")
}
