import Glibc

/// The file calls of the file-based cache designs (file per entry, SQLite + files, the plain-file
/// floor), shared so that every design writes and reads a value file the same way: relative to an
/// open directory descriptor (`openat`, `renameat`, `unlinkat`), never fsynced.
///
/// A write goes to a temporary name in the same directory and is renamed over the final name, so a
/// reader never sees a half-written value; a read opens the file, asks `fstat` for its size and
/// reads it whole into a new array.
struct CacheDirectory {
    let path: String
    let descriptor: Int32

    /// Opens the directory at `path`, creating it if it is missing.
    init(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw Self.failure("mkdir", path) }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("open", path) }
        self.path = path
        descriptor = fd
    }

    func close() { _ = Glibc.close(descriptor) }

    /// Writes `bytes` to `temporary`, then renames it to `name`.
    @inline(__always)
    func write(_ bytes: UnsafeRawBufferPointer, to name: String, through temporary: String) throws {
        try write(bytes, to: temporary)
        guard renameat(descriptor, temporary, descriptor, name) == 0 else { throw Self.failure("renameat", name) }
    }

    /// Creates or truncates `name` and writes `bytes` to it.
    @inline(__always)
    func write(_ bytes: UnsafeRawBufferPointer, to name: String) throws {
        let fd = openat(descriptor, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure("openat (write)", name) }
        defer { _ = Glibc.close(fd) }
        var done = 0
        while done < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", name)
            }
            done += count
        }
    }

    /// The whole content of `name`, or nil if there is no such file.
    @inline(__always)
    func read(_ name: String) throws -> [UInt8]? {
        let fd = openat(descriptor, name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Self.failure("openat (read)", name)
        }
        defer { _ = Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw Self.failure("fstat", name) }
        let size = Int(status.st_size)
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            while initialized < size {
                let count = Glibc.read(fd, buffer.baseAddress! + initialized, size - initialized)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure("read", name)
                }
                if count == 0 { break }  // Truncated since the fstat: what was read is the value.
                initialized += count
            }
        }
    }

    /// Removes `name`; a missing file is not an error.
    @inline(__always)
    func remove(_ name: String) throws {
        guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else { throw Self.failure("unlinkat", name) }
    }

    /// Every name in the directory (but `.` and `..`) with its size and modification time.
    func list() throws -> [(name: String, size: Int, modified: Int64)] {
        let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("openat (list)", path) }
        guard let stream = fdopendir(fd) else {
            let failure = Self.failure("fdopendir", path)
            _ = Glibc.close(fd)
            throw failure
        }
        defer { closedir(stream) }
        var entries: [(name: String, size: Int, modified: Int64)] = []
        errno = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var status = stat()
            guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { continue }  // Removed while listed.
                throw Self.failure("fstatat", name)
            }
            let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            entries.append((name, Int(status.st_size), modified))
            errno = 0
        }
        guard errno == 0 else { throw Self.failure("readdir", path) }
        return entries
    }

    private static func failure(_ call: String, _ name: String) -> BenchError {
        BenchError("\(call) \(name) failed: \(String(cString: strerror(errno))) (errno \(errno))")
    }
}

/// The file name of a key in the file-based designs: the key's 64-bit FNV-1a hash in 16 hex digits
/// (fixed length, no escaping; a collision among the benchmark's keys would show in the checks).
enum KeyHash {
    @inline(__always)
    static func fileName(_ key: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        key.withUTF8Bytes { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                let nibble = Int((hash >> UInt64(60 - 4 * index)) & 0xf)
                buffer[index] = digits.utf8Start[nibble]
            }
            return 16
        }
    }
}

/// The wall clock, in nanoseconds since 1970: the access and modification dates of the designs.
enum WallClock {
    @inline(__always)
    static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
