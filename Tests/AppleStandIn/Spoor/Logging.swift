// The swift-log declarations the auto-capture module uses, with swift-log 1.16's signatures, for
// scripts/typecheck-apple-glue: swift-log itself passes C pointers by `&`, which a Linux standard library does
// not support with Objective-C interop on. Bodies trap: nothing here runs.

public struct Logger: Sendable {
    public init(label: String) { fatalError() }

    public struct Message: ExpressibleByStringLiteral, ExpressibleByStringInterpolation, Sendable {
        public init(stringLiteral value: String) { fatalError() }
    }

    public func warning(
        _ message: @autoclosure () -> Logger.Message, source: @autoclosure () -> String? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {}
}
