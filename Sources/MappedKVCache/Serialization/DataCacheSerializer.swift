// The identity serializer for `Data`.
//
// Invariant: the stored bytes are exactly the bytes of the value.

import Foundation

/// Stores `Data` values as they are.
public struct DataCacheSerializer: CacheSerializer {
    /// Makes a data serializer.
    public init() {}

    /// The bytes of `value`.
    ///
    /// - Parameter value: The data to store.
    /// - Returns: The bytes of `value`, unchanged.
    public func encode(_ value: Data) -> [UInt8] {
        [UInt8](value)
    }

    /// `bytes` as `Data`.
    ///
    /// - Parameter bytes: The stored bytes.
    /// - Returns: `bytes`, unchanged, as `Data`.
    public func decode(_ bytes: [UInt8]) -> Data {
        Data(bytes)
    }
}
