/// The varint that begins every data region; its value carries no information.
///
/// Readers skip one varint of any valid length (1 to 10 bytes). Writers emit a 4-byte varint
/// with a value in `0x200000...0x0FFF_FFFF`, as MMKV 2.4.2 does (docs/FORMAT.md section 2.4).
package enum ItemSizeHolder {
    /// The length of the holder MappedKV writes.
    package static let encodedLength = 4

    /// The range of values whose minimal varint takes exactly four bytes.
    package static let valueRange: ClosedRange<UInt64> = 0x20_0000...0x0FFF_FFFF

    /// A fresh 4-byte holder with a random value, like MMKV's `randomItemSizeHolder`.
    package static func random<G: RandomNumberGenerator>(using generator: inout G) -> [UInt8] {
        Varint.encode(UInt64.random(in: valueRange, using: &generator))
    }

    /// The length of the holder that starts `region`, or nil if the region is empty or does not
    /// start with a valid varint.
    package static func length(in region: UnsafeRawBufferPointer) -> Int? {
        guard !region.isEmpty else { return nil }
        var cursor = ByteCursor(region)
        guard (try? cursor.readVarint64()) != nil else { return nil }
        return cursor.position
    }

    /// A fresh 4-byte holder drawn from the system's generator.
    package static func random() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }
}
