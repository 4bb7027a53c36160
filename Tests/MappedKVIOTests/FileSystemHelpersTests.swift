// Proves the small file-system helpers: Directory.create makes nested directories with mode 0700,
// accepts existing ones and reports a file in the way as ENOTDIR; FileIdentity names the same file under
// two paths (a hard link, a symbolic link, a rename) and tells different files apart; PageSize rounds up
// to whole pages.

import Glibc
import MappedKVIO
import Testing

@Suite("Directory")
struct DirectoryTests {
    @Test("create makes every missing level with mode 0700; existing levels are fine")
    func nested() throws {
        try TemporaryDirectory.with { directory in
            let deep = directory.file("a/b/c")
            try Directory.create(deep)
            for path in [directory.file("a"), directory.file("a/b"), deep] {
                var info = stat()
                #expect(stat(path, &info) == 0)
                #expect(info.st_mode & S_IFMT == S_IFDIR)
                #expect(info.st_mode & 0o777 == 0o700)
            }
            try Directory.create(deep)
            try Directory.create(deep + "//d/")
            #expect(Directory.fileExists(directory.file("a/b/c/d")))
        }
    }

    @Test("a file where a directory should be is ENOTDIR, naming that path", arguments: ["f", "f/g"])
    func fileInTheWay(below: String) throws {
        try TemporaryDirectory.with { directory in
            let file = directory.file("f")
            try makeFile(file, [1])
            #expect(throws: SystemError("mkdir", path: file, errno: ENOTDIR)) {
                try Directory.create(directory.file(below))
            }
            #expect(throws: SystemError("mkdir", path: file, errno: ENOTDIR)) {
                try Directory.create(directory.file(below + "/h"))
            }
        }
    }

    @Test("fileExists sees files and directories, not missing paths")
    func exists() throws {
        try TemporaryDirectory.with { directory in
            #expect(Directory.fileExists(directory.path))
            #expect(!Directory.fileExists(directory.file("none")))
            try makeFile(directory.file("f"), [])
            #expect(Directory.fileExists(directory.file("f")))
        }
    }
}

@Suite("FileIdentity")
struct FileIdentityTests {
    @Test("a hard link is the same file; another file is not")
    func hardLink() throws {
        try TemporaryDirectory.with { directory in
            let first = directory.file("first")
            let second = directory.file("second")
            try makeFile(first, [1])
            #expect(link(first, second) == 0)
            let a = try #require(FileIdentity(path: first))
            let b = try #require(FileIdentity(path: second))
            #expect(a == b)
            let other = directory.file("other")
            try makeFile(other, [1])
            #expect(FileIdentity(path: other) != a)
            #expect(Set([a, b, try #require(FileIdentity(path: other))]).count == 2)
        }
    }

    @Test("an open descriptor, a symbolic link and a renamed path all name the same file")
    func descriptorSymlinkAndRename() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("f")
            try makeFile(path, [1])
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            let byDescriptor = try FileIdentity(file)
            #expect(FileIdentity(path: path) == byDescriptor)
            #expect(symlink(path, directory.file("link")) == 0)
            #expect(FileIdentity(path: directory.file("link")) == byDescriptor)
            #expect(rename(path, directory.file("moved")) == 0)
            #expect(FileIdentity(path: directory.file("moved")) == byDescriptor)
            #expect(try FileIdentity(file) == byDescriptor)
        }
    }

    @Test("a missing path has no identity")
    func missing() throws {
        try TemporaryDirectory.with { directory in
            #expect(FileIdentity(path: directory.file("none")) == nil)
        }
    }
}

@Suite("PageSize")
struct PageSizeTests {
    @Test("the page size is the system's, a power of two")
    func current() {
        #expect(PageSize.current == sysconf(Int32(_SC_PAGESIZE)))
        #expect(PageSize.current > 0 && PageSize.current & (PageSize.current - 1) == 0)
    }

    @Test(
        "roundUp gives whole pages, at least one",
        arguments: [(0, 4096), (1, 4096), (4096, 4096), (4097, 8192), (8192, 8192), (10_000, 12_288)])
    func roundUp(size: Int, expected: Int) {
        #expect(PageSize.roundUp(size, pageSize: 4096) == expected)
    }
}
