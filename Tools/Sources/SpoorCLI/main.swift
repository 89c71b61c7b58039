// `spoor`: the command-line tool. Each subcommand lives in a file of its own; this file only parses the
// arguments and turns what happens into the exit status of the command-line spec.
import ArgumentParser
import Foundation

exit(await SpoorCommand.main(Array(CommandLine.arguments.dropFirst())))
