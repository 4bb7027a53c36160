// Proves FileDescriptor's file operations on real files: the open modes (and their errors), reads that
// come up short at the end of the file, writes that leave holes, size/truncate/allocate, link counts,
// remove, and that failures carry the call, the path and errno. Short writes are in ShortWriteTests.

import Glibc
import MappedKVIO
import Testing

@Suite("FileDescriptor")
struct FileDescriptorTests {
    @Test("read(count:at:) gives fewer bytes near the end of the file and none at or past it")
    func shortReads() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("ten")
            try makeFile(path, pattern(10))
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            #expect(try file.read(count: 10, at: 0) == pattern(10))
            #expect(try file.read(count: 8, at: 6) == Array(pattern(10)[6..<10]))
            #expect(try file.read(count: 1000, at: 9) == [pattern(10)[9]])
            #expect(try file.read(count: 8, at: 10) == [])
            #expect(try file.read(count: 8, at: 5000) == [])
            #expect(try file.read(count: 0, at: 0) == [])
        }
    }

    @Test("a read larger than a page across the end of a big file returns exactly the rest")
    func longShortRead() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("big")
            let size = 3 * PageSize.current + 17
            try makeFile(path, pattern(size))
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            #expect(try file.read(count: 4 * PageSize.current, at: 5) == Array(pattern(size)[5...]))
        }
    }

    @Test(
        "read(into:at:) fills its buffers in turn; the count tells a file that ends inside them or goes past them",
        arguments: [0, 50, 96, 97, 100]
    )
    func vectorRead(fileSize: Int) throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("vector")
            try makeFile(path, pattern(fileSize + 3))
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            try file.truncate(to: fileSize)
            // A 3-byte head, an empty buffer (skipped), 90 bytes, and a spare byte: 94 bytes from 3.
            var head = [UInt8](repeating: 0xEE, count: 3)
            var body = [UInt8](repeating: 0xEE, count: 90)
            var spare: [UInt8] = [0xEE]
            var nothing: [UInt8] = []
            let count = try head.withUnsafeMutableBytes { head in
                try body.withUnsafeMutableBytes { body in
                    try spare.withUnsafeMutableBytes { spare in
                        try nothing.withUnsafeMutableBytes { nothing in
                            try file.read(into: [head, nothing, body, spare], at: 3)
                        }
                    }
                }
            }
            let expected = Array(pattern(fileSize + 3)[min(3, fileSize)..<min(97, fileSize)])
            #expect(count == expected.count)
            #expect(Array((head + body + spare).prefix(count)) == expected)
            #expect((head + body + spare)[count...].allSatisfy { $0 == 0xEE }, "bytes past the count are untouched")
        }
    }

    @Test("a write past the end leaves a hole of zeros; an empty write changes nothing")
    func writes() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("hole")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            try write(pattern(4), to: file, at: 100)
            #expect(try file.size() == 104)
            #expect(try file.read(count: 104, at: 0) == [UInt8](repeating: 0, count: 100) + pattern(4))
            try write([], to: file, at: 500)
            #expect(try file.size() == 104)
        }
    }

    @Test("write(_:at:) with several buffers writes them one after another from the offset, skipping empty ones")
    func vectorWrite() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("vector")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            let head = pattern(6, seed: 1)
            let body = pattern(3 * PageSize.current + 5, seed: 2)
            try head.withUnsafeBytes { head in
                try body.withUnsafeBytes { body in
                    try file.write([head, UnsafeRawBufferPointer(start: nil, count: 0), body], at: 10)
                }
            }
            #expect(try file.size() == 10 + head.count + body.count)
            #expect(try file.read(count: 1 << 20, at: 0) == [UInt8](repeating: 0, count: 10) + head + body)
            try file.write([], at: 0)
            #expect(try file.size() == 10 + head.count + body.count)
        }
    }

    @Test("readWriteCreate creates the file with mode 0600 and close-on-exec, and keeps existing bytes")
    func readWriteCreate() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("new")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            #expect(file.path == path)
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(fcntl(file.rawValue, F_GETFD) & FD_CLOEXEC != 0)
            try makeFile(path, pattern(8))
            let again = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { again.close() }
            #expect(try again.read(count: 8, at: 0) == pattern(8))
        }
    }

    @Test("writeTruncate empties an existing file; createNew refuses one with EEXIST")
    func truncatingAndExclusiveOpens() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("existing")
            try makeFile(path, pattern(50))
            let emptied = try FileDescriptor.open(path, access: .writeTruncate)
            #expect(try emptied.size() == 0)
            emptied.close()
            #expect(throws: SystemError("open", path: path, errno: EEXIST)) {
                _ = try FileDescriptor.open(path, access: .createNew)
            }
            let fresh = try FileDescriptor.open(directory.file("fresh"), access: .createNew)
            defer { fresh.close() }
            #expect(try fresh.size() == 0)
        }
    }

    @Test("appendCreate reads, and its writes go to the end whatever the offset (pwrite with O_APPEND)")
    func append() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("log")
            try makeFile(path, pattern(10))
            let file = try FileDescriptor.open(path, access: .appendCreate)
            defer { file.close() }
            try write([0xEE, 0xFF], to: file, at: 0)
            #expect(try file.size() == 12)
            #expect(try file.read(count: 12, at: 0) == pattern(10) + [0xEE, 0xFF])
        }
    }

    @Test("failures carry the call, the path and errno")
    func failures() throws {
        try TemporaryDirectory.with { directory in
            let missing = directory.file("missing")
            #expect(throws: SystemError("open", path: missing, errno: ENOENT)) {
                _ = try FileDescriptor.open(missing, access: .readOnly)
            }
            let path = directory.file("write-only")
            let writer = try FileDescriptor.open(path, access: .createNew)
            defer { writer.close() }
            #expect(throws: SystemError("pread", path: path, errno: EBADF)) {
                _ = try writer.read(count: 1, at: 0)
            }
            let reader = try FileDescriptor.open(path, access: .readOnly)
            defer { reader.close() }
            #expect(throws: SystemError("pwrite", path: path, errno: EBADF)) {
                try write([1], to: reader, at: 0)
            }
            #expect(throws: SystemError("ftruncate", path: path, errno: EINVAL)) {
                try reader.truncate(to: 10)
            }
        }
    }

    @Test("truncate sets the size both ways; growth reads as zeros")
    func truncate() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("t")
            try makeFile(path, pattern(100))
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            try file.truncate(to: 40)
            #expect(try file.size() == 40)
            try file.truncate(to: 60)
            #expect(try file.read(count: 100, at: 0) == Array(pattern(100)[0..<40]) + [UInt8](repeating: 0, count: 20))
        }
    }

    @Test("allocate grows with zeros and reserved blocks, and never shrinks")
    func allocate() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("a")
            try makeFile(path, pattern(10))
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            let size = 4 * PageSize.current
            try file.allocate(upTo: size)
            #expect(try file.size() == size)
            #expect(try file.read(count: size, at: 0) == pattern(10) + [UInt8](repeating: 0, count: size - 10))
            var info = stat()
            #expect(fstat(file.rawValue, &info) == 0)
            #expect(Int(info.st_blocks) * 512 >= size)
            try file.allocate(upTo: 5)
            #expect(try file.size() == size)
            try file.synchronize()
        }
    }

    @Test("linkCount follows hard links and reaches 0 once every name is removed")
    func linkCount() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("one")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            #expect(try file.linkCount() == 1)
            #expect(link(path, directory.file("two")) == 0)
            #expect(try file.linkCount() == 2)
            try FileDescriptor.remove(path)
            try FileDescriptor.remove(directory.file("two"))
            #expect(try file.linkCount() == 0)
            #expect(!Directory.fileExists(path))
        }
    }

    @Test("remove ignores a missing file and reports other failures")
    func remove() throws {
        try TemporaryDirectory.with { directory in
            try FileDescriptor.remove(directory.file("never-there"))
            let sub = directory.file("sub")
            try Directory.create(sub)
            #expect(throws: SystemError("unlink", path: sub, errno: EISDIR)) {
                try FileDescriptor.remove(sub)
            }
            try FileDescriptor.remove(sub + "/x/y")
            let plain = directory.file("plain")
            try makeFile(plain, [1])
            #expect(throws: SystemError("unlink", path: plain + "/x", errno: ENOTDIR)) {
                try FileDescriptor.remove(plain + "/x")
            }
        }
    }
}
