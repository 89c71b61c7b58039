// `spoor`: the command-line tool. Each subcommand lives in a file of its own.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: spoor COMMAND [ARGS]

    commands:
      encode                 JSON-lines events on stdin -> protobuf Batch on stdout
      decode                 protobuf Batch (or batch frame) on stdin -> JSON-lines events on stdout
      inspect DIR [--json]   segments, records, sealed batches and counters of a storage directory
      simulate SCENARIO.jsonl [--storage DIR] [--config CONFIG.json]
                             replay an app's life through the real tracker and print its events
    """

var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.isEmpty ? "" : arguments.removeFirst()
let status: Int32 = switch command {
case "encode": EncodeCommand.run(arguments)
case "decode": DecodeCommand.run(arguments)
case "inspect": InspectCommand.run(arguments)
case "simulate": SimulateCommand.run(arguments)
case "_lifecycle-child": LifecycleChildCommand.run(arguments)
case "help", "-h", "--help":
    { print(usage); return 0 }()
default:
    { CLI.fail(command.isEmpty ? usage : "unknown command '\(command)'\n\(usage)", status: 64) }()
}
exit(status)
