extension String {
    /// Runs `body` on the string's UTF-8 bytes. A native Swift string is already contiguous UTF-8,
    /// so this does not copy; a bridged one is copied once.
    @inline(__always)
    func withUTF8Bytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        let copy = Array(utf8)
        return try copy.withUnsafeBytes { try body($0) }
    }
}
