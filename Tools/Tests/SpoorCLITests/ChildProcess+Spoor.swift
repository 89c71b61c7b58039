import Foundation
import SpoorTesting

/// How long a test waits for something bound to happen before it calls it a failure: minutes, so that a loaded
/// machine still passes and a regression that hangs still fails. A passing test never waits it out.
let testBound: Duration = .seconds(300)

extension ChildProcess {
    /// Starts `executable` (the built `spoor` unless given) with `arguments` and this process's environment
    /// changed by `environment`, feeding it `input` and then end of file (no input: an empty standard input).
    /// SpoorTesting's `ChildProcess` reads its output line by line as it arrives, so a test awaits a condition on
    /// the lines seen so far, or the end, instead of sleeping.
    convenience init(
        _ arguments: [String], executable: URL = SpoorProcess.executable, input: Data? = nil, environment: [String: String] = [:]
    ) throws {
        let changed = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        try self.init(executable, arguments, input: input, environment: changed, bound: testBound)
    }
}
