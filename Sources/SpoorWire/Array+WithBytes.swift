extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps the closure's typed error.
    package func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = withUnsafeBytes { raw in Result { () throws(E) in try body(raw) } }
        return try result.get()
    }
}
