// Proves ReplacedFile: a file of at least minimumSize is held open across a rename over it and
// closed by releaseInBackground on another thread; a smaller or missing file is not held; one
// dropped without a release (a rename that failed) is closed at once.

import Foundation
import Glibc
import MappedKVIO
import Testing

/// The descriptors of this process open on the file of `identity` that no longer has a name.
private func descriptorsOnUnlinked(_ identity: FileIdentity) throws -> [Int32] {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name in
        guard let fd = Int32(name) else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_nlink == 0, UInt64(info.st_dev) == identity.device,
            UInt64(info.st_ino) == identity.inode
        else { return nil }
        return fd
    }
}

@Suite("ReplacedFile")
struct ReplacedFileTests {
    @Test("a large file outlives the rename over it until the release, which closes it on another thread")
    func heldAcrossRename() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("index")
            try makeFile(path, pattern(ReplacedFile.minimumSize))
            try makeFile(directory.file("index.tmp"), pattern(16))
            let old = try #require(FileIdentity(path: path))
            let replaced = try #require(ReplacedFile(at: path))
            try Directory.rename(directory.file("index.tmp"), to: path)
            #expect(FileIdentity(path: path) != old)
            #expect(try descriptorsOnUnlinked(old).count == 1, "the rename dropped a name, not the file")
            replaced.releaseInBackground()
            try waitUntil("the replaced file is closed") { try descriptorsOnUnlinked(old).isEmpty }
        }
    }

    @Test("a file smaller than minimumSize, or none, is left to the rename")
    func smallOrMissing() throws {
        try TemporaryDirectory.with { directory in
            try makeFile(directory.file("small"), pattern(ReplacedFile.minimumSize - 1))
            #expect(ReplacedFile(at: directory.file("small")) == nil)
            #expect(ReplacedFile(at: directory.file("missing")) == nil)
        }
    }

    @Test("one dropped without a release, as after a failed rename, is closed at once")
    func droppedCloses() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("index")
            try makeFile(path, pattern(ReplacedFile.minimumSize))
            let old = try #require(FileIdentity(path: path))
            do {
                let replaced = ReplacedFile(at: path)
                #expect(replaced != nil)
                try withExtendedLifetime(replaced) {
                    try FileDescriptor.remove(path)
                    #expect(try descriptorsOnUnlinked(old).count == 1)
                }
            }
            #expect(try descriptorsOnUnlinked(old).isEmpty)
        }
    }
}
