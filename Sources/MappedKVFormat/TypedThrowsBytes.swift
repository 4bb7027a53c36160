extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps the body's typed error.
    @inlinable
    package func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes { raw in Result { () throws(E) in try body(raw) } }.get()
    }
}
