import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// Stores written by real MMKV 2.4.2 load, read and accept appends.
@Suite struct GoldenStoreTests {
    @Test(arguments: [("a_plain", "case_a"), ("c_overwrites", "case_c")])
    func readOnlyOpenMatchesExpect(caseName: String, id: String) throws {
        let root = "\(vectorsDirectory)/mmkv-2.4.2/\(caseName)/root"
        let store = try MappedKV(id: id, directory: root, configuration: Configuration(isReadOnly: true))
        defer { store.close() }
        let expected = try readExpect(caseName, id: id)
        #expect(try contents(of: store).mapValues(hex) == expected)
        #expect(try store.count == expected.count)
    }

    @Test func typedReadsOfGoldenValues() throws {
        let root = "\(vectorsDirectory)/mmkv-2.4.2/a_plain/root"
        let store = try MappedKV(id: "case_a", directory: root, configuration: Configuration(isReadOnly: true))
        #expect(try store.int32(forKey: "i32") == -42)
        #expect(try store.uint32(forKey: "u32") == 4_000_000_000)
        #expect(try store.int64(forKey: "i64") == -9_000_000_000)
        #expect(try store.uint64(forKey: "u64") == .max)
        #expect(try store.bool(forKey: "b") == true)
        #expect(try store.double(forKey: "d") == 3.141592653589793)
        #expect(try store.float(forKey: "f") == 1.5)
        #expect(try store.string(forKey: "s") == "hello, MMKV ✓")
        #expect(try store.bytes(forKey: "by") == [0x00, 0xFF, 0x7F, 0x80])
        #expect(try store.valueSize(forKey: "s") == 15)
        #expect(try store.valueSize(forKey: "s", actualSize: false) == 16)
        #expect(throws: MappedKVError.readOnly(id: "case_a")) { try store.set(true, forKey: "x") }
    }

    @Test func appendingToAnMMKVStoreKeepsItsRecords() throws {
        let dir = TemporaryDirectory("golden-append")
        try copyGoldenStore("c_overwrites", to: dir)
        let before = try #require(fileBytes(dir.file("case_c")))
        var model = try readExpect("c_overwrites", id: "case_c")
        do {
            let store = try MappedKV(id: "case_c", directory: dir.path)
            try store.set(Int32(7), forKey: "counter")
            try store.set("appended", forKey: "new")
            try store.removeValue(forKey: "keep")
            model["counter"] = "07"
            model["new"] = "08617070656e646564"
            model["keep"] = nil
            let info = try store.info()
            #expect(info.meta.sequence == 1, "appends must not increment the sequence")
            #expect(info.actualSize == 939 + 10 + 14 + 6)
            store.close()
        }
        let after = try #require(fileBytes(dir.file("case_c")))
        #expect(Array(after[4..<(4 + 939)]) == Array(before[4..<(4 + 939)]), "MMKV's records stay untouched")
        let reopened = try MappedKV(id: "case_c", directory: dir.path)
        #expect(try contents(of: reopened).mapValues(hex) == model)
    }

    @Test func goldenStoreFilesAreNotChangedByReadOnlyOpen() throws {
        let dir = TemporaryDirectory("golden-ro")
        try copyGoldenStore("a_plain", to: dir)
        let data = fileBytes(dir.file("case_a"))
        let meta = fileBytes(dir.file("case_a.crc"))
        let store = try MappedKV(id: "case_a", directory: dir.path, configuration: Configuration(isReadOnly: true))
        _ = try store.entries()
        store.close()
        #expect(fileBytes(dir.file("case_a")) == data)
        #expect(fileBytes(dir.file("case_a.crc")) == meta)
    }
}
