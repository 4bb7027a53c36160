// Proves FileDescriptor.write goes round again after a genuinely short pwrite. With RLIMIT_FSIZE lowered
// (and SIGXFSZ ignored) the kernel writes a pwrite that crosses the limit only up to the limit and
// returns the short count; write then tries the rest, that pwrite fails with EFBIG, and write throws it,
// with the bytes up to the limit in the file. The limit is process-wide, so it is set far above any file
// another test writes (the file here is sparse: about 8 GiB long, one block on disk), changed only
// around the writes, and restored; the suite is serialized.

import Glibc
import MappedKVIO
import Testing

private let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)

/// The soft RLIMIT_FSIZE now.
private func currentFileSizeLimit() throws -> rlimit {
    var value = rlimit()
    guard getrlimit(resource, &value) == 0 else { throw SystemError("getrlimit", errno: Glibc.errno) }
    return value
}

/// Runs `body` with the soft RLIMIT_FSIZE at `limit` and SIGXFSZ ignored, then restores both.
private func withFileSizeLimit<R>(_ limit: Int, _ body: () throws -> R) throws -> R {
    let saved = try currentFileSizeLimit()
    guard saved.rlim_max == rlim_t.max || saved.rlim_max >= rlim_t(limit) else {
        throw SupportError("the hard RLIMIT_FSIZE \(saved.rlim_max) is below \(limit)")
    }
    var ignore = sigaction()
    ignore.__sigaction_handler.sa_handler = SIG_IGN
    sigemptyset(&ignore.sa_mask)
    var previousAction = sigaction()
    guard sigaction(SIGXFSZ, &ignore, &previousAction) == 0 else {
        throw SystemError("sigaction", errno: Glibc.errno)
    }
    defer { _ = sigaction(SIGXFSZ, &previousAction, nil) }
    var lowered = saved
    lowered.rlim_cur = rlim_t(limit)
    guard setrlimit(resource, &lowered) == 0 else { throw SystemError("setrlimit", errno: Glibc.errno) }
    defer {
        var restore = saved
        _ = setrlimit(resource, &restore)
    }
    return try body()
}

@Suite("FileDescriptor.write: short writes", .serialized)
struct ShortWriteTests {
    /// Not a multiple of the page size, so the short write ends inside a page.
    static let limit = (1 << 33) + 123

    @Test("a write across RLIMIT_FSIZE writes up to the limit, goes round again and throws EFBIG")
    func writeAcrossLimit() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("limited")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            let bytes = pattern(100)
            let before = try currentFileSizeLimit()
            let (control, error) = try withFileSizeLimit(Self.limit) {
                // The control: the kernel really does answer a bare pwrite with a short count.
                let control = bytes.withUnsafeBytes { buffer in
                    pwrite(file.rawValue, buffer.baseAddress, buffer.count, off_t(Self.limit - 30))
                }
                _ = ftruncate(file.rawValue, 0)
                let error = #expect(throws: SystemError.self) {
                    try write(bytes, to: file, at: Self.limit - 30)
                }
                return (control, error)
            }
            #expect(control == 30)
            #expect(error == SystemError("pwrite", path: path, errno: EFBIG))
            #expect(try file.size() == Self.limit)
            #expect(try file.read(count: 100, at: Self.limit - 30) == Array(bytes[0..<30]))
            #expect(try file.read(count: 30, at: Self.limit - 60) == [UInt8](repeating: 0, count: 30))
            let after = try currentFileSizeLimit()
            #expect((after.rlim_cur, after.rlim_max) == (before.rlim_cur, before.rlim_max))
        }
    }

    @Test("a vectored write across RLIMIT_FSIZE goes round again after the short pwritev and throws EFBIG")
    func vectorWriteAcrossLimit() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("limited")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            // The limit falls 30 bytes into the second buffer: the first pwritev writes 50 bytes.
            let first = pattern(20, seed: 1)
            let second = pattern(100, seed: 2)
            let error = try withFileSizeLimit(Self.limit) {
                #expect(throws: SystemError.self) {
                    try first.withUnsafeBytes { first in
                        try second.withUnsafeBytes { second in try file.write([first, second], at: Self.limit - 50) }
                    }
                }
            }
            #expect(error == SystemError("pwritev", path: path, errno: EFBIG))
            #expect(try file.size() == Self.limit)
            #expect(try file.read(count: 100, at: Self.limit - 50) == first + Array(second[0..<30]))
        }
    }

    @Test("under the limit a write is whole; at the limit it fails at once and writes nothing")
    func writesBelowAndAtLimit() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("limited")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            let bytes = pattern(100)
            let error = try withFileSizeLimit(Self.limit) {
                try write(bytes, to: file, at: Self.limit - 100)
                return #expect(throws: SystemError.self) {
                    try write(bytes, to: file, at: Self.limit)
                }
            }
            #expect(error == SystemError("pwrite", path: path, errno: EFBIG))
            #expect(try file.size() == Self.limit)
            #expect(try file.read(count: 200, at: Self.limit - 100) == bytes)
        }
    }
}
