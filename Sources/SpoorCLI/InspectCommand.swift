/// `spoor inspect DIR`: placeholder until the transport log lands.
enum InspectCommand {
    static func run(_ args: [String]) -> Int32 {
        CLI.fail("spoor inspect: not available in this build", status: 69)
    }
}
