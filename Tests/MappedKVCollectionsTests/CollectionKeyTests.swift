import Testing

@testable import MappedKVCollections

/// (bucket, key) pairs map to store keys one to one.
@Suite("Collection keys")
struct CollectionKeyTests {
    @Test("separators and empties never collide, and every key decodes to its pair")
    func neverCollide() {
        let pieces = ["", ":", "a", "a:b", "b:c", "1", "1:", ":1", "10", "é", "\u{2}", "\u{2}1:a", "🔑", "a b"]
        var seen: [String: (String, String)] = [:]
        for bucket in pieces {
            for key in pieces {
                let storeKey = CollectionKey.encode(bucket: bucket, key: key)
                if let other = seen[storeKey] {
                    Issue.record("(\(bucket), \(key)) and \(other) share \(storeKey.debugDescription)")
                }
                seen[storeKey] = (bucket, key)
                let decoded = CollectionKey.decode(storeKey)
                #expect(decoded?.bucket == bucket && decoded?.key == key)
            }
        }
    }

    @Test(
        "random strings with separators: the encoding is injective and round-trips", arguments: [1, 2, 3] as [UInt64])
    func randomPairs(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        let alphabet = Array("ab:1 0\u{2}é")
        func random() -> String {
            String(
                (0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        var seen: [String: String] = [:]
        for _ in 0..<20_000 {
            let bucket = random()
            let key = random()
            let pair = "\(bucket.debugDescription)/\(key.debugDescription)"
            let storeKey = CollectionKey.encode(bucket: bucket, key: key)
            if let other = seen[storeKey], other != pair {
                Issue.record("seed \(seed): \(pair) collides with \(other)")
            }
            seen[storeKey] = pair
            let decoded = CollectionKey.decode(storeKey)
            #expect(decoded?.bucket == bucket && decoded?.key == key, "seed \(seed): \(pair)")
        }
    }

    @Test("keys that are not canonical entry keys do not decode")
    func foreignKeys() {
        for key in ["plain", "", "\u{2}", "\u{2}:", "\u{2}x:a", "\u{2}01:ab", "\u{2}5:ab", "\u{1}mappedkv.collections"]
        {
            #expect(CollectionKey.decode(key) == nil, "\(key.debugDescription)")
        }
    }
}
