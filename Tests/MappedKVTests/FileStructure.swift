import Foundation
import Glibc
import MappedKV
import MappedKVCrypto

/// An independent reader of MMKV files, written from docs/FORMAT.md without the library's format code,
/// used to check that the files MappedKV writes follow the format exactly.
enum FileStructure {
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Bitwise CRC-32 (reflected 0xEDB88320), independent of zlib.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    /// Reads a varint at `position`, requiring the minimal encoding.
    static func minimalVarint(_ bytes: ArraySlice<UInt8>, _ position: inout Int) -> (UInt64, Int)? {
        let start = position
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.endIndex {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                let length = position - start
                if length > 1 && byte == 0 { return nil }  // a trailing zero group is not minimal
                return (value, length)
            }
            shift += 7
            if shift >= 70 { return nil }
        }
        return nil
    }

    /// The problems found in a data file and meta file pair; empty if the pair is well-formed.
    /// With a key, the region is decrypted (one CFB stream from the meta IV) before its records are parsed.
    static func problems(data: [UInt8], meta: [UInt8], key: CryptKey? = nil) -> [String] {
        var problems: [String] = []
        if data.isEmpty || data.count % pageSize != 0 {
            problems.append("data file size \(data.count) is not a whole number of pages")
        }
        if meta.count < 112 || meta.count % pageSize != 0 {
            problems.append("meta file size \(meta.count) is not a whole number of pages")
        }
        guard meta.count >= 112, data.count >= 4 else { return problems }
        let crc = u32(meta, 0)
        let version = u32(meta, 4)
        let actualSize = Int(u32(meta, 28))
        let lastSize = Int(u32(meta, 32))
        let lastCRC = u32(meta, 36)
        if version != 4 { problems.append("meta version \(version), expected 4") }
        if u32(data, 0) != 0 { problems.append("data header is \(u32(data, 0)), MMKV 2.4 leaves it 0") }
        guard actualSize + 4 <= data.count else { return problems + ["actualSize \(actualSize) past the file"] }
        let region = data[4..<(4 + actualSize)]
        if crc32(region) != crc { problems.append("meta CRC does not match the region") }
        if lastSize > actualSize || crc32(data[4..<(4 + lastSize)]) != lastCRC {
            problems.append("lastConfirmed {\(lastSize), \(lastCRC)} does not describe a prefix of the region")
        }
        if actualSize == 0 { return problems }
        var plain = Array(region)
        if let key {
            if version < 2 { problems.append("encrypted store without a random IV (version \(version))") }
            do {
                try CFBStream(key: key.aesKey, iv: Array(meta[12..<28])).decrypt(&plain)
            } catch {
                return problems + ["the region could not be decrypted: \(error)"]
            }
        }
        let records = plain[...]
        var position = records.startIndex
        guard let (_, holderLength) = minimalVarint(records, &position), holderLength == 4 else {
            return problems + ["holder is not a minimal 4-byte varint"]
        }
        while position < records.endIndex {
            let recordStart = position
            guard let (keyLength, _) = minimalVarint(records, &position), keyLength > 0,
                position + Int(keyLength) <= records.endIndex
            else {
                return problems + ["bad key length at region offset \(recordStart)"]
            }
            position += Int(keyLength)
            guard let (valueLength, _) = minimalVarint(records, &position),
                position + Int(valueLength) <= records.endIndex
            else {
                return problems + ["bad value length at region offset \(recordStart)"]
            }
            position += Int(valueLength)
        }
        return problems
    }

    /// The problems in the files of store `id` under `directory`.
    static func problems(directory: String, id: String, key: CryptKey? = nil) -> [String] {
        guard let data = fileBytes(directory + "/" + id), let meta = fileBytes(directory + "/" + id + ".crc") else {
            return ["files missing"]
        }
        return problems(data: data, meta: meta, key: key)
    }
}
