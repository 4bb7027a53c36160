// A CryptKey is prepared exactly as MMKV prepares a key (so MMKV's encrypted files open), and it
// never shows key material in a description.

import MappedKV
import Testing

@Suite struct CryptKeyTests {
    @Test func keysArePaddedOrTruncatedLikeMMKV() throws {
        let short = try #require(CryptKey(Array("MMKVKey0123456".utf8)))
        #expect(short.bytes == Array("MMKVKey0123456".utf8) + [0, 0])
        #expect(!short.isAES256)
        let long = try #require(CryptKey(Array("0123456789abcdefXYZ".utf8)))
        #expect(long.bytes == Array("0123456789abcdef".utf8))
        let wide = try #require(CryptKey(Array("key".utf8), aes256: true))
        #expect(wide.bytes.count == 32 && wide.isAES256)
        #expect(CryptKey([]) == nil, "an empty key means no encryption")
    }

    @Test func descriptionsNeverShowKeyMaterial() throws {
        let key = try #require(CryptKey(Array("TopSecretKey".utf8)))
        #expect(!"\(key)".contains("TopSecret"))
        #expect(!String(reflecting: key).contains("84"), "no raw byte values either")
    }
}
