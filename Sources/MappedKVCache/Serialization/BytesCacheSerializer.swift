// The identity serializer for byte arrays.
//
// Invariant: the stored bytes are the value itself, unchanged.

/// Stores `[UInt8]` values as they are.
public struct BytesCacheSerializer: CacheSerializer {
    /// Makes a bytes serializer.
    public init() {}

    /// `value` itself.
    ///
    /// - Parameter value: The bytes to store.
    /// - Returns: `value`, unchanged.
    public func encode(_ value: [UInt8]) -> [UInt8] {
        value
    }

    /// `bytes` themselves.
    ///
    /// - Parameter bytes: The stored bytes.
    /// - Returns: `bytes`, unchanged.
    public func decode(_ bytes: [UInt8]) -> [UInt8] {
        bytes
    }
}
