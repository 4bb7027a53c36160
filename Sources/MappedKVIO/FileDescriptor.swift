import Glibc

/// An open file, owned by whoever holds it: close it exactly once.
///
/// Every call retries on `EINTR` and throws ``SystemError``.
package struct FileDescriptor: Sendable {
    /// The descriptor number.
    package let rawValue: Int32
    /// The path the file was opened at, for error messages.
    package let path: String

    /// How a file is opened.
    package enum Access: Sendable {
        /// Read only; the file must exist.
        case readOnly
        /// Read and write; the file is created with mode 0600 if missing.
        case readWriteCreate
        /// Write only; the file is created with mode 0600 if missing and emptied if present.
        case writeTruncate
        /// Read and append (`O_APPEND`: every `write` goes to the end); created with mode 0600 if missing.
        case appendCreate
        /// Write only to a new file, created with mode 0600; fails with `EEXIST` if the path exists.
        case createNew
    }

    /// Opens `path` with close-on-exec.
    package static func open(_ path: String, access: Access) throws(SystemError) -> FileDescriptor {
        let flags: Int32 =
            switch access {
            case .readOnly: O_RDONLY | O_CLOEXEC
            case .readWriteCreate: O_RDWR | O_CREAT | O_CLOEXEC
            case .writeTruncate: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
            case .appendCreate: O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC
            case .createNew: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
            }
        let fd = try syscall("open", path: path) { Glibc.open(path, flags, mode_t(0o600)) }
        return FileDescriptor(rawValue: fd, path: path)
    }

    /// Closes the descriptor. `EINTR` from close is not retried: on Linux the descriptor is already gone.
    package func close() {
        _ = Glibc.close(rawValue)
    }

    /// The file's current size in bytes.
    package func size() throws(SystemError) -> Int {
        var info = stat()
        _ = try syscall("fstat", path: path) { fstat(rawValue, &info) }
        return Int(info.st_size)
    }

    /// When the file's contents last changed (`st_mtim`), in nanoseconds since 1970. Writes
    /// through a shared mapping set it too, when they dirty a clean page.
    package func modificationTime() throws(SystemError) -> UInt64 {
        var info = stat()
        _ = try syscall("fstat", path: path) { fstat(rawValue, &info) }
        return UInt64(truncatingIfNeeded: info.st_mtim.tv_sec) &* 1_000_000_000
            &+ UInt64(truncatingIfNeeded: info.st_mtim.tv_nsec)
    }

    /// How many directory entries name the file (0 once it has been deleted).
    package func linkCount() throws(SystemError) -> Int {
        var info = stat()
        _ = try syscall("fstat", path: path) { fstat(rawValue, &info) }
        return Int(info.st_nlink)
    }

    /// Sets the file's size; growth reads back as zeros.
    package func truncate(to size: Int) throws(SystemError) {
        _ = try syscall("ftruncate", path: path) { ftruncate(rawValue, off_t(size)) }
    }

    /// Grows the file to at least `size` bytes with disk blocks reserved, so that writes through a
    /// mapping cannot fault for lack of space. Falls back to `ftruncate` where `fallocate` is unsupported.
    package func allocate(upTo size: Int) throws(SystemError) {
        let current = try self.size()
        guard size > current else { return }
        do {
            try syscallReturningErrno("posix_fallocate", path: path) {
                posix_fallocate(rawValue, off_t(current), off_t(size - current))
            }
        } catch  where error.errno == EOPNOTSUPP || error.errno == EINVAL {
            try truncate(to: size)
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    package func read(count: Int, at offset: Int) throws(SystemError) -> [UInt8] {
        guard count > 0 else { return [] }
        var result: Result<Int, SystemError> = .success(0)
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            result = Result { () throws(SystemError) in
                try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            }
            initialized = (try? result.get()) ?? 0
        }
        _ = try result.get()
        return bytes
    }

    /// Reads into `buffer` at `offset` until it is full or the file ends; returns the bytes read.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = try syscall("pread", path: path) {
                pread(rawValue, base + done, buffer.count - done, off_t(offset + done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads into `buffers` in turn, from `offset` on; returns the bytes read. One `preadv` (at
    /// most 1024 buffers), then, if `untilEnd`, more after a short read, until the buffers are all
    /// full or the file ends: a count below the buffers' total means the file ended, and a spare
    /// last buffer tells a longer file.
    ///
    /// Without `untilEnd`, that one call only. A local file system reads a regular file short only
    /// at its end, so a count below the total almost always means the file ended there; a caller
    /// that must be sure reads again with `untilEnd`. (One call is what a read of a file of known
    /// length costs: confirming the end took every value file's read a second system call.)
    package func read(
        into buffers: [UnsafeMutableRawBufferPointer], at offset: Int, untilEnd: Bool = true
    ) throws(SystemError) -> Int {
        let raw = buffers.lazy.map { UnsafeRawBufferPointer($0) }
        return try IOVectors.with(raw) { (vectors) throws(SystemError) -> Int in
            while !vectors.isComplete {
                let done = vectors.transferred
                let n = try syscall("preadv", path: path) {
                    vectors.withRemaining { preadv(rawValue, $0, $1, off_t(offset + done)) }
                }
                vectors.advance(by: n)
                if n == 0 || !untilEnd { break }
            }
            return vectors.transferred
        }
    }

    /// Writes all of `bytes` at `offset`.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = try syscall("pwrite", path: path) {
                pwrite(rawValue, base + done, bytes.count - done, off_t(offset + done))
            }
            done += n
        }
    }

    /// Writes all of `buffers`, one after another, from `offset` on: one `pwritev` (at most 1024
    /// buffers), then more after a short write, from where it stopped. A header and a value are
    /// written without first being copied into one buffer, in the one call a single `pwrite`
    /// would take.
    package func write(_ buffers: [UnsafeRawBufferPointer], at offset: Int) throws(SystemError) {
        try IOVectors.with(buffers) { (vectors) throws(SystemError) in
            while !vectors.isComplete {
                let done = vectors.transferred
                let n = try syscall("pwritev", path: path) {
                    vectors.withRemaining { pwritev(rawValue, $0, $1, off_t(offset + done)) }
                }
                // A regular file takes at least a byte of a write, or fails it; anything else
                // must not loop forever.
                guard n > 0 else { throw SystemError("pwritev", path: path, errno: EIO) }
                vectors.advance(by: n)
            }
        }
    }

    /// Flushes the file's data to disk (`fdatasync`).
    package func synchronize() throws(SystemError) {
        _ = try syscall("fdatasync", path: path) { fdatasync(rawValue) }
    }

    /// Removes the file at `path`; a missing file is not an error.
    package static func remove(_ path: String) throws(SystemError) {
        if unlink(path) != 0 && Glibc.errno != ENOENT {
            throw SystemError("unlink", path: path, errno: Glibc.errno)
        }
    }
}
