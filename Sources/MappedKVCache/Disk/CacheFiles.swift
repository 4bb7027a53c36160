import Foundation
import Glibc
import MappedKV
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// The value files of a disk cache: `files/<name>` for values above the inline threshold,
/// `tmp/<pid>-<name>.tmp` while one is written, `trash/<name>/` while a ``DiskCache/removeAll()``
/// deletes them in the background.
///
/// A value file is written whole under a temporary name and renamed into `files/` (so a reader
/// never sees a partial file under a recorded name), and starts with a small header:
///
/// | field | bytes | meaning |
/// |---|---|---|
/// | magic | 4 | `MKVC` |
/// | version | 1 | 1 |
/// | flags | 1 | bit 0: encrypted |
/// | IV | 16 | AES-CFB IV, if encrypted (fresh random bytes per file) |
/// | value | size | the value, encrypted from the IV if flag bit 0 |
///
/// A read checks the header, the length and the CRC recorded in the manifest; any mismatch is a miss.
struct CacheFiles: Sendable {
    let directory: String
    let cryptKey: CryptKey?

    static let magic: [UInt8] = Array("MKVC".utf8)
    static let version: UInt8 = 1

    var filesDirectory: String { directory + "/files" }
    var temporaryDirectory: String { directory + "/tmp" }
    var trashDirectory: String { directory + "/trash" }

    func path(of name: String) -> String { filesDirectory + "/" + name }

    /// Creates the folders that are missing.
    func createDirectories() throws(CacheError) {
        for folder in [directory, filesDirectory, temporaryDirectory, trashDirectory] {
            try fileCall { () throws(SystemError) in try Directory.create(folder) }
        }
    }

    /// Writes `value` to a new temporary file and returns its path; the caller renames it into place.
    func writeTemporary(_ value: [UInt8], halfway: () -> Void = {}) throws(CacheError) -> String {
        let path = temporaryDirectory + "/\(getpid())-\(FileNames.random()).tmp"
        var bytes = Self.magic + [Self.version, cryptKey == nil ? 0 : 1]
        bytes.reserveCapacity(bytes.count + 16 + value.count)
        if let cryptKey {
            try cryptoCall { () throws(CryptoFailure) in
                let iv = try SecureRandom.bytes(16)
                bytes += iv
                let start = bytes.count
                bytes += value
                try CFBStream(key: cryptKey.aesKey, iv: iv).encrypt(&bytes, from: start)
            }
        } else {
            bytes += value
        }
        try fileCall { () throws(SystemError) in
            let file = try FileDescriptor.open(path, access: .createNew)
            defer { file.close() }
            let half = bytes.count / 2
            try bytes.withRawBytes { (raw) throws(SystemError) in
                try file.write(UnsafeRawBufferPointer(rebasing: raw[..<half]), at: 0)
                halfway()
                try file.write(UnsafeRawBufferPointer(rebasing: raw[half...]), at: half)
            }
        }
        return path
    }

    /// Renames a temporary file to `files/<name>`.
    func install(_ temporaryPath: String, as name: String) throws(CacheError) {
        let target = path(of: name)
        _ = try fileCall { () throws(SystemError) in
            try syscall("rename", path: target) { Glibc.rename(temporaryPath, target) }
        }
    }

    /// The value stored in `files/<name>` if it is exactly the one `record` describes; nil otherwise.
    ///
    /// - Throws: ``CacheError/crypto(_:)`` if decryption fails, which says nothing about the file.
    func read(_ name: String, expecting record: CacheEntryRecord) throws(CacheError) -> [UInt8]? {
        guard let file = try? FileDescriptor.open(path(of: name), access: .readOnly) else { return nil }
        defer { file.close() }
        let headerLength = 6 + (cryptKey == nil ? 0 : 16)
        guard let header = try? file.read(count: headerLength, at: 0), header.count == headerLength,
            Array(header[0..<4]) == Self.magic, header[4] == Self.version, header[5] == (cryptKey == nil ? 0 : 1),
            (try? file.size()) == headerLength + record.size
        else { return nil }
        // Read straight into the value's storage (no zero fill, no second copy), a chunk at a time,
        // each chunk decrypted and checksummed while it is still in the processor's cache.
        let stream = try cryptoCall { () throws(CryptoFailure) in
            try cryptKey.map { (key) throws(CryptoFailure) in try CFBStream(key: key.aesKey, iv: Array(header[6..<22]))
            }
        }
        var crc: UInt32 = 0
        var complete = true
        var failure: CryptoFailure?
        let value = [UInt8](unsafeUninitializedCapacity: record.size) { buffer, count in
            let storage = UnsafeMutableRawBufferPointer(buffer)
            while count < record.size {
                let end = min(record.size, count + Self.readChunk)
                let chunk = UnsafeMutableRawBufferPointer(rebasing: storage[count..<end])
                guard (try? file.read(into: chunk, at: headerLength + count)) == chunk.count else {
                    complete = false
                    return
                }
                do throws(CryptoFailure) { try stream?.decrypt(chunk) } catch {
                    failure = error
                    complete = false
                    return
                }
                crc = CRC32.update(crc, UnsafeRawBufferPointer(chunk))
                count = end
            }
        }
        if let failure { throw .crypto(failure.description) }
        guard complete, crc == record.crc else { return nil }
        return value
    }

    /// The bytes read, decrypted and checksummed at a time: small enough to stay in a core's cache.
    static let readChunk = 128 << 10

    /// Deletes `files/<name>`; a missing file is not an error. Something `unlink` cannot delete
    /// (a folder, which only an orphan can be) is deleted with everything in it.
    func remove(_ name: String) {
        let path = path(of: name)
        do { try FileDescriptor.remove(path) } catch { Self.deleteTree(path) }
    }

    /// The names in `files/`, and the other entries found there (which trim deletes too).
    func listFiles() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: filesDirectory)) ?? []
    }

    /// Temporary files left by processes that no longer run (their pid is in the name).
    func staleTemporaryFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory)) ?? []
        return names.filter { name in
            guard let dash = name.firstIndex(of: "-"), let pid = Int32(name[..<dash]) else { return true }
            return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
        }.map { temporaryDirectory + "/" + $0 }
    }

    /// Moves `files/` aside into `trash/` and creates a fresh one; returns the trash folder.
    func moveFilesToTrash() throws(CacheError) -> String {
        let trash = trashDirectory + "/" + FileNames.random()
        let files = filesDirectory
        _ = try fileCall { () throws(SystemError) in try syscall("rename", path: files) { Glibc.rename(files, trash) } }
        try fileCall { () throws(SystemError) in try Directory.create(files) }
        return trash
    }

    /// Folders in `trash/` (left by a removeAll whose background deletion did not finish).
    func trashFolders() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: trashDirectory)) ?? []).map { trashDirectory + "/" + $0 }
    }

    /// Deletes a folder and everything in it. Another deleter may be removing the same tree (a
    /// trim racing removeAll's background deletion, or a trim in another process); an entry that
    /// vanishes under `removeItem` makes it give up early, so it tries again while the tree is there.
    static func deleteTree(_ path: String) {
        for _ in 0..<100 {
            do {
                try FileManager.default.removeItem(atPath: path)
                return
            } catch {
                var info = stat()
                guard lstat(path, &info) == 0 else { return }  // gone, by whoever removed it
            }
        }
    }

    /// The bytes free on the file system holding the cache, for an unprivileged process.
    func freeSpace() -> Int? {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}
