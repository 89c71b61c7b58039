/// `spoor simulate`: placeholder until auto-tracking lands.
enum SimulateCommand {
    static func run(_ args: [String]) -> Int32 {
        CLI.fail("spoor simulate: not available in this build", status: 69)
    }
}
