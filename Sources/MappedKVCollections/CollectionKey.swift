// The store key of a (bucket, key) pair (docs/FORMAT.md 11.1). The invariant: two different pairs
// never share a store key, and every store key this module writes decodes back to its one pair.
// The bucket is length-prefixed rather than separated, so bucket "a:b" with key "c" and bucket "a"
// with key "b:c" are different keys, and neither name needs escaping.

/// Encodes and decodes the store keys of bucket entries.
enum CollectionKey {
    /// The first character of every entry key (U+0002); the store marker starts with U+0001.
    static let entryPrefix: Character = "\u{2}"

    /// The first byte of every entry key (U+0002).
    static let entryByte: UInt8 = 2

    /// `U+0002`, the bucket's UTF-8 length in decimal, `:`, the bucket, then the key.
    static func encode(bucket: String, key: String) -> String { join(prefix(ofBucket: bucket), key) }

    /// The first character of every index definition key (U+0003).
    static let definitionPrefix: UInt8 = 3

    /// The store key of the definition of index `name` of `bucket`: as an entry key, with U+0003.
    static func definitionKey(bucket: String, name: String) -> String { "\u{3}\(bucket.utf8.count):\(bucket)\(name)" }

    /// The (bucket, index name) of a definition key, or nil.
    static func decodeDefinition(_ storeKey: String) -> (bucket: String, name: String)? {
        guard storeKey.utf8.first == definitionPrefix else { return nil }
        return decode("\u{2}" + storeKey.dropFirst()).map { (bucket: $0.bucket, name: $0.key) }
    }

    /// The prefix every key of `bucket` starts with.
    static func prefix(ofBucket bucket: String) -> String { "\u{2}\(bucket.utf8.count):\(bucket)" }

    /// The store key of `key` in the bucket whose ``prefix(ofBucket:)`` is `prefix`: the bytes of
    /// `prefix + key`, copied in one go (a put joins one, and `+` costs several times as much; a
    /// page lays its keys' bytes end to end in a `PackedKeys` instead).
    static func join(_ prefix: String, _ key: String) -> String {
        var prefix = prefix
        var key = key
        return prefix.withUTF8 { head in
            key.withUTF8 { tail in
                String(unsafeUninitializedCapacity: head.count + tail.count) { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    if let source = head.baseAddress { base.initialize(from: source, count: head.count) }
                    if let source = tail.baseAddress { (base + head.count).initialize(from: source, count: tail.count) }
                    return head.count + tail.count
                }
            }
        }
    }

    /// The (bucket, key) of a store key, or nil for a key that is not an entry key.
    static func decode(_ storeKey: String) -> (bucket: String, key: String)? {
        var storeKey = storeKey
        return storeKey.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// The (bucket, key) of a store key's UTF-8 bytes, or nil for a key that is not an entry key.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> (bucket: String, key: String)? {
        guard bytes.first == 2 else { return nil }
        var index = 1
        var length = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
            let digit = Int(bytes[index]) &- Int(UInt8(ascii: "0"))
            guard (0...9).contains(digit), length < 100_000_000 else { return nil }
            length = length * 10 + digit
            index += 1
        }
        // A digit run without a leading zero (the one canonical form), ':', then `length` bytes of bucket.
        guard index > 1, index < bytes.count, index + 1 + length <= bytes.count,
            bytes[1] != UInt8(ascii: "0") || index == 2
        else { return nil }
        let bucketStart = index + 1
        let bucketEnd = bucketStart + length
        let bucket = UnsafeRawBufferPointer(rebasing: bytes[bucketStart..<bucketEnd])
        let key = UnsafeRawBufferPointer(rebasing: bytes[bucketEnd...])
        // The key came from a String, so its bytes are UTF-8; the bucket must not split a character.
        guard let bucketText = String(validatingUTF8Bytes: bucket), let keyText = String(validatingUTF8Bytes: key)
        else {
            return nil
        }
        return (bucketText, keyText)
    }
}

extension String {
    /// The string of `bytes` if they are valid UTF-8 (decoded, then checked to round-trip).
    init?(validatingUTF8Bytes bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.count == bytes.count, text.utf8.elementsEqual(bytes) else { return nil }
        self = text
    }
}
