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
/// Files are read, never mapped: another process could truncate one, and a mapped page past the
/// new end faults with `SIGBUS` instead of failing a call.
struct CacheFiles: Sendable {
    let directory: String
    let cryptKey: CryptKey?
    /// Where the crash-state explorer collects the writes to the cache's files, in the manifest's
    /// timeline; nil outside it.
    let recorder: WriteRecorder?

    init(directory: String, cryptKey: CryptKey?) {
        self.directory = directory
        self.cryptKey = cryptKey
        recorder = WriteRecorder.recorder(for: directory + "/" + DiskCache.manifestID)
    }

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
    ///
    /// One `pwritev` of the header and the value where it lies (encrypted into a copy first if the
    /// cache is), so a plain value is not copied: the page cache then holds the file in the large
    /// folios one write makes, which a read copies out faster than the small ones of split writes.
    /// Only with `halfway` (a crash test's fault point) is the file written in two halves,
    /// `halfway` called between them.
    func writeTemporary(_ value: [UInt8], halfway: (() -> Void)? = nil) throws(CacheError) -> String {
        let path = temporaryDirectory + "/\(getpid())-\(FileNames.random()).tmp"
        var header = Self.magic + [Self.version, cryptKey == nil ? 0 : 1]
        var body = value  // shared, not copied, unless encrypted below
        if let cryptKey {
            try cryptoCall { () throws(CryptoFailure) in
                let iv = try SecureRandom.bytes(16)
                header += iv
                try CFBStream(key: cryptKey.aesKey, iv: iv).encrypt(&body)
            }
        }
        try fileCall { () throws(SystemError) in
            let file = try FileDescriptor.open(path, access: .createNew)
            defer { file.close() }
            try header.withRawBytes { (header) throws(SystemError) in
                try body.withRawBytes { (body) throws(SystemError) in
                    guard let halfway else {
                        try file.write([header, body], at: 0)
                        recorder?.record(.file(relative(path), offset: 0, bytes: header + Array(body)))
                        return
                    }
                    let half = body.count / 2
                    try file.write([header, UnsafeRawBufferPointer(rebasing: body[..<half])], at: 0)
                    recorder?.record(.file(relative(path), offset: 0, bytes: header + Array(body[..<half])))
                    halfway()
                    try file.write(UnsafeRawBufferPointer(rebasing: body[half...]), at: header.count + half)
                    recorder?.record(.file(relative(path), offset: header.count + half, bytes: Array(body[half...])))
                }
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
        recorder?.record(.renamed(relative(temporaryPath), to: relative(target)))
    }

    /// Flushes `files/<name>` to disk; a file deleted since is not an error.
    func synchronize(_ name: String) throws(CacheError) {
        let path = path(of: name)
        do {
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            try file.synchronize()
        } catch {
            if error.errno == ENOENT { return }
            throw .system(SystemCallError(error))
        }
        recorder?.record(.syncFile(relative(path)))
    }

    /// Flushes `files/` itself, so that the names installed in it survive a power loss.
    func synchronizeFilesFolder() throws(CacheError) {
        let folder = filesDirectory
        try fileCall { () throws(SystemError) in try Directory.synchronize(folder) }
        recorder?.record(.syncFolder("files"))
    }

    /// Removes a temporary file after a failed set.
    func removeTemporary(_ path: String) {
        try? FileDescriptor.remove(path)
        recorder?.record(.removed(relative(path)))
    }

    /// `path` relative to the cache's directory, for the recorder.
    private func relative(_ path: String) -> String {
        path.hasPrefix(directory + "/") ? String(path.dropFirst(directory.count + 1)) : path
    }

    /// The value stored in `files/<name>` if it is exactly the one `record` describes; nil otherwise.
    ///
    /// - Throws: ``CacheError/crypto(_:)`` if decryption fails, which says nothing about the file.
    func read(_ name: String, expecting record: CacheEntryRecord) throws(CacheError) -> [UInt8]? {
        guard let file = try? FileDescriptor.open(path(of: name), access: .readOnly) else { return nil }
        defer { file.close() }
        let headerLength = 6 + (cryptKey == nil ? 0 : 16)
        // A damaged record may claim up to 2 GiB; past a size whose allocation is harmless, the
        // file's size is checked before the value's storage is allocated.
        if record.size > Self.sizeCheckedFirst {
            guard (try? file.size()) == headerLength + record.size else { return nil }
        }
        var intact = false
        var failure: CryptoFailure?
        // One `preadv` reads the header, the value straight into its storage (no zero fill, no
        // second copy) and a spare byte past the recorded end: only a file of exactly
        // header + size bytes fills the first two and leaves the spare byte unread, so no `fstat`.
        // A read that comes up short is read again to the file's end before it counts against the
        // file (a local file system reads short only at the end, so this is not the steady state).
        let value = [UInt8](unsafeUninitializedCapacity: record.size) { buffer, count in
            withUnsafeTemporaryAllocation(byteCount: headerLength + 1, alignment: 1) { header in
                let storage = UnsafeMutableRawBufferPointer(buffer)
                let parts = [
                    UnsafeMutableRawBufferPointer(rebasing: header[..<headerLength]), storage,
                    UnsafeMutableRawBufferPointer(rebasing: header[headerLength...]),
                ]
                let wanted = headerLength + record.size
                var read = (try? file.read(into: parts, at: 0, untilEnd: false)) ?? -1
                if read >= 0, read < wanted { read = (try? file.read(into: parts, at: 0)) ?? -1 }
                guard read == wanted,
                    header[0..<4].elementsEqual(Self.magic), header[4] == Self.version,
                    header[5] == (cryptKey == nil ? 0 : 1)
                else { return }
                count = record.size
                do throws(CryptoFailure) {
                    let iv = Array(UnsafeRawBufferPointer(rebasing: header[6..<headerLength]))
                    intact = try Self.decryptAndCheck(storage, with: cryptKey, iv: iv, crc: record.crc)
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw .crypto(failure.description) }
        return intact ? value : nil
    }

    /// Decrypts `value` in place (if `cryptKey` is set) and tells whether its CRC-32 is `crc`,
    /// a chunk at a time, each chunk checksummed right after its decryption, while it is cached.
    private static func decryptAndCheck(
        _ value: UnsafeMutableRawBufferPointer, with cryptKey: CryptKey?, iv: [UInt8], crc expected: UInt32
    ) throws(CryptoFailure) -> Bool {
        guard let cryptKey else { return CRC32.update(0, UnsafeRawBufferPointer(value)) == expected }
        let stream = try CFBStream(key: cryptKey.aesKey, iv: iv)
        var crc: UInt32 = 0
        var start = 0
        while start < value.count {
            let chunk = UnsafeMutableRawBufferPointer(rebasing: value[start..<min(value.count, start + cryptChunk)])
            try stream.decrypt(chunk)
            crc = CRC32.update(crc, UnsafeRawBufferPointer(chunk))
            start += chunk.count
        }
        return crc == expected
    }

    /// The largest value a read allocates storage for before it knows the file is that long.
    static let sizeCheckedFirst = 16 << 20

    /// The bytes of an encrypted value decrypted and checksummed at a time: small enough to stay
    /// in a core's cache between the two.
    static let cryptChunk = 128 << 10

    /// Deletes `files/<name>`; a missing file is not an error. Something `unlink` cannot delete
    /// (a folder, which only an orphan can be) is deleted with everything in it.
    func remove(_ name: String) {
        let path = path(of: name)
        do { try FileDescriptor.remove(path) } catch { Self.deleteTree(path) }
        recorder?.record(.removed("files/" + name))
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
